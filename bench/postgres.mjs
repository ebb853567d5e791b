// The same daemon on both engines: append latency, warm context/build and compaction/prepare on a
// compacted 10k-entry session, first on SQLite, then on a PostgreSQL server (a throwaway cluster
// this bench starts and stops) reached through a TCP proxy that delays every packet each way by
// BENCH_PG_DELAY_MS (default 1 ms: scripts/lib/delay-proxy.mjs), as a server across a network
// would, and after the appends a bare `pg` client's SELECT 1 and one-row INSERT through the same
// proxy (what the network and the server's commit cost without the daemon); then the 100k-entry
// pi file imported over loopback (no proxy: the import's own speed);
// then one `serve --socket` daemon through the proxy, another client's context/build alone and
// while a client appends in a loop; then four daemons appending to one server through the proxy.
// SQLite's own rows with targets are in the daemon, compaction and contention areas; the SQLite
// rows here are measured the same way as the PostgreSQL ones, for the side-by-side.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { postgresTarget, startDelayProxy } from "../scripts/lib/delay-proxy.mjs";
import { daemonMain, requireFromDaemon } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median, percentile, since, timeRuns } from "./lib/stats.mjs";

if (!existsSync(daemonMain)) {
  process.stdout.write(`the daemon is not built (${daemonMain} is missing): run \`pnpm build\`\n`);
  process.exit(1);
}
const { protocol: P, startDaemon, startSocketDaemon, temporaryHome } = await import("./lib/daemon-process.mjs");
const { conversation, writePiSession } = await import("./lib/generated-session.mjs");
const { startPostgresCluster } = await import("./lib/postgres.mjs");

const SESSION_ENTRIES = 10_000;
const BATCH = 1000;
/** Entries kept after the compaction: the context the builds return and the range prepare sees grows from there. */
const KEPT_TAIL = 2_000;
const APPENDS = 1_000;
const WARM_UP_APPENDS = 500;
const WARM_RUNS = 30;
const DAEMONS = 4;
const SECONDS = Number(process.env.BENCH_CONTENTION_SECONDS ?? 10);
const DELAY_MS = Number(process.env.BENCH_PG_DELAY_MS ?? 1);
const IMPORT_ENTRIES = 100_000;
/** As daemon.mjs's import: the same generated pi file. */
const IMPORT_BYTES_PER_ENTRY = 2640;
const SOCKET_BUILDS = 300;
const SOCKET_ROUNDS = 6;

const chat = conversation(700);
const oneKilobyte = (tag, index) => ({
  type: "message",
  message: { role: "user", content: `${"lorem ipsum dolor sit amet ".repeat(38)}`.slice(0, 1000) + ` ${tag}#${index}` },
});

/** A 10k-entry session built with entry/appendMany, compacted but for its last KEPT_TAIL entries, plus one turn. */
async function compactedSession(daemon) {
  const { session } = await daemon.request(P.SessionCreate, { cwd: "/bench/postgres", name: "bench engines" });
  const ids = [];
  for (let first = 0; first < SESSION_ENTRIES; first += BATCH) {
    const { entries } = await daemon.request(P.EntryAppendMany, { sessionId: session.id, entries: chat.entryBodies(BATCH, first) });
    for (const entry of entries) ids.push(entry.id);
  }
  // KEPT_TAIL is a multiple of 4: the first kept entry is a user message, a valid cut point.
  const compaction = {
    type: "compaction",
    summary: "## Goal\nBenchmark both engines.\n",
    firstKeptEntryId: ids[SESSION_ENTRIES - KEPT_TAIL],
    tokensBefore: null,
  };
  await daemon.request(P.EntryAppend, { sessionId: session.id, entry: compaction });
  // A compaction as the leaf has nothing to compact: one more turn after it.
  await daemon.request(P.EntryAppendMany, { sessionId: session.id, entries: chat.entryBodies(4, SESSION_ENTRIES) });
  return session.id;
}

/** The rows measured on one engine (`env` selects it); the appends' times, for the daemon's share. */
async function measureEngine(label, env) {
  const home = temporaryHome(`engines-${label}`);
  const daemon = await startDaemon(home.path, env);
  try {
    progress(`${label}: building a compacted ${SESSION_ENTRIES.toLocaleString("en-US")}-entry session`);
    const started = performance.now();
    const sessionId = await compactedSession(daemon);
    report({ name: `${label}: build ${SESSION_ENTRIES / 1000}k entries (appendMany × ${BATCH})`, value: SESSION_ENTRIES / (since(started) / 1000), unit: "entries/s", digits: 0 });

    progress(`${label}: context/build and compaction/prepare, warm`);
    const build = () => daemon.request(P.ContextBuild, { sessionId });
    await timeRuns(10, build);
    const builds = await timeRuns(WARM_RUNS, build);
    report({ name: `${label}: context/build, compacted 10k session, warm p50 of ${WARM_RUNS}`, value: median(builds), unit: "ms", digits: 2 });
    const prepare = () => daemon.request(P.CompactionPrepare, { sessionId });
    await timeRuns(3, prepare);
    const prepares = await timeRuns(WARM_RUNS, prepare);
    report({ name: `${label}: compaction/prepare over stdio, 2k-entry range, warm p50`, value: median(prepares), unit: "ms", digits: 2 });

    progress(`${label}: ${APPENDS} appends of 1 KB`);
    await timeRuns(WARM_UP_APPENDS, (i) => daemon.request(P.EntryAppend, { sessionId, entry: oneKilobyte("warm", i) }));
    const appends = await timeRuns(APPENDS, (i) => daemon.request(P.EntryAppend, { sessionId, entry: oneKilobyte("timed", i) }));
    report({ name: `${label}: entry/append 1 KB, p50 of ${APPENDS}`, value: median(appends), unit: "ms", digits: 3 });
    report({ name: `${label}: entry/append 1 KB, p99`, value: percentile(appends, 99), unit: "ms", digits: 3 });
    return { appends };
  } finally {
    await daemon.stop();
    home.remove();
  }
}

/**
 * What the network and the server cost an append on their own, measured just after the daemon's
 * appends on the same server through the same proxy (once the daemon has stopped): a bare `pg`
 * client's `SELECT 1` (one round trip) and its one-row INSERT of the same 1 KB text, sent alone
 * (the server commits it, flushing its WAL, as it does an append). An append cannot be faster
 * than that INSERT plus the client's hop to the daemon; what it adds to the INSERT, at the p50 and
 * at the p99, is the daemon's share, and what the targets hold: the network and the server's
 * commit move with the machine from one run to the next, the share much less. After the appends,
 * not in rounds between them: in rounds the appends themselves came out slower, so the rows would
 * no longer measure appends alone.
 */
async function serverFloor(storeUrl, label, appends) {
  const { Client } = requireFromDaemon("pg");
  const client = new Client({ connectionString: storeUrl });
  await client.connect();
  try {
    progress(`${label}: the same server through the same proxy, from a bare pg client`);
    await client.query("CREATE TABLE bench_floor (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body TEXT NOT NULL)");
    const select = () => client.query({ name: "bench_floor_select", text: "SELECT 1" });
    const body = (i) => oneKilobyte("floor", i).message.content;
    const insert = (i) => client.query({ name: "bench_floor_insert", text: "INSERT INTO bench_floor (body) VALUES ($1)", values: [body(i)] });
    await timeRuns(WARM_UP_APPENDS, insert);
    const inserts = await timeRuns(APPENDS, insert);
    const selects = await timeRuns(APPENDS, select);
    report({ name: `${label}: bare pg client, SELECT 1, p50 of ${APPENDS}`, value: median(selects), unit: "ms", digits: 3 });
    report({ name: `${label}: bare pg client, one-row INSERT of 1 KB, p50 of ${APPENDS}`, value: median(inserts), unit: "ms", digits: 3 });
    report({ name: `${label}: bare pg client, one-row INSERT of 1 KB, p99`, value: percentile(inserts, 99), unit: "ms", digits: 3 });
    for (const [at, share, max] of [
      ["p50", median(appends) - median(inserts), 1.5],
      ["p99", percentile(appends, 99) - percentile(inserts, 99), 15],
    ]) {
      report({
        name: `${label}: the daemon's share of an append (entry/append less that INSERT), ${at}`,
        value: share,
        unit: "ms",
        digits: 3,
        target: { max },
        note: "the client's hop to the daemon, the daemon, the entry's indexes",
      });
    }
    await client.query("DROP TABLE bench_floor");
  } finally {
    await client.end();
  }
}

/** Four daemons (four homes, one database) appending 1 KB entries to two shared sessions. */
async function fourDaemons(storeUrl, label) {
  const homes = Array.from({ length: DAEMONS }, (_, d) => temporaryHome(`engines-four-${d}`));
  const daemons = await Promise.all(homes.map((home) => startDaemon(home.path, { BASE_CONTEXT_STORE_URL: storeUrl })));
  try {
    progress(`PostgreSQL: ${DAEMONS} daemons appending for ${SECONDS} s`);
    const sessions = [];
    for (let i = 0; i < 2; i++) sessions.push((await daemons[0].request(P.SessionCreate, { cwd: "/bench/postgres" })).session.id);
    await Promise.all(
      daemons.map(async (daemon, d) => {
        for (let i = 0; i < 20; i++) await daemon.request(P.EntryAppend, { sessionId: sessions[d % 2], entry: oneKilobyte(`w${d}`, i) });
      }),
    );
    const latencies = [];
    const deadline = performance.now() + SECONDS * 1000;
    const counts = await Promise.all(
      daemons.map(async (daemon, d) => {
        let appended = 0;
        while (performance.now() < deadline) {
          const started = performance.now();
          await daemon.request(P.EntryAppend, { sessionId: sessions[d % 2], entry: oneKilobyte(`d${d}`, appended) });
          latencies.push(since(started));
          appended++;
        }
        return appended;
      }),
    );
    const total = counts.reduce((sum, count) => sum + count, 0);
    report({ name: `${label}: four daemons, appends per second (all four)`, value: total / SECONDS, unit: "/s", digits: 0 });
    report({ name: `${label}: four daemons, entry/append 1 KB, p50 of ${total}`, value: median(latencies), unit: "ms", digits: 2 });
    report({ name: `${label}: four daemons, entry/append 1 KB, p99`, value: percentile(latencies, 99), unit: "ms", digits: 2 });
  } finally {
    await Promise.all(daemons.map((daemon) => daemon.stop()));
    for (const home of homes) home.remove();
  }
}

/** The 100k-entry pi file (daemon.mjs's) imported on one engine: entries per second (returned too). */
async function importPiFile(label, env) {
  const home = temporaryHome(`engines-import-${label}`);
  const daemon = await startDaemon(home.path, env);
  try {
    const file = join(home.path, "generated-session.jsonl");
    const bytes = await writePiSession(file, IMPORT_ENTRIES, { bytesPerEntry: IMPORT_BYTES_PER_ENTRY });
    progress(`${label}: importing ${(bytes / 1e6).toFixed(0)} MB of pi JSONL (${IMPORT_ENTRIES.toLocaleString("en-US")} entries)`);
    const started = performance.now();
    const imported = await daemon.request(P.SessionImport, { format: "pi-jsonl", path: file });
    const seconds = since(started) / 1000;
    rmSync(file);
    report({
      name: `${label}: session/import, ${imported.entryCount.toLocaleString("en-US")}-entry pi file`,
      value: imported.entryCount / seconds,
      unit: "entries/s",
      digits: 0,
      note: `${seconds.toFixed(1)} s`,
    });
    return imported.entryCount / seconds;
  } finally {
    await daemon.stop();
    home.remove();
  }
}

/**
 * One socket daemon, two clients: client B's context/build on a 2k-entry session, alone and
 * while client A appends 1 KB entries to another session in a loop. Target: A raises B's p99 by
 * no more than 10 ms. Measured in rounds that alternate "alone" and "beside", after a round of
 * each not counted (the daemon opens its connections to the server as they are first needed), so
 * that the machine's drift over the run weighs on both sides alike.
 */
async function socketNeighbours(label, env) {
  const home = temporaryHome(`engines-socket-${label}`);
  const daemon = await startSocketDaemon(home.path, env);
  try {
    const a = await daemon.connect("appender");
    const b = await daemon.connect("reader");
    const { session: readSession } = await b.request(P.SessionCreate, { cwd: "/bench/postgres", name: "read" });
    for (let first = 0; first < 2000; first += 500) {
      await b.request(P.EntryAppendMany, { sessionId: readSession.id, entries: chat.entryBodies(500, first) });
    }
    const { session: writeSession } = await a.request(P.SessionCreate, { cwd: "/bench/postgres", name: "write" });
    const build = () => b.request(P.ContextBuild, { sessionId: readSession.id });
    progress(`${label}: socket daemon, context/build alone and beside an appending client, in turns`);
    const alone = [];
    const beside = [];
    let appended = 0;
    const perRound = SOCKET_BUILDS / SOCKET_ROUNDS;
    for (let round = 0; round <= SOCKET_ROUNDS; round++) {
      const counted = round > 0;
      const builtAlone = await timeRuns(counted ? perRound : 20, build);
      let appending = true;
      const appender = (async () => {
        while (appending) {
          await a.request(P.EntryAppend, { sessionId: writeSession.id, entry: oneKilobyte("loop", appended) });
          if (counted) appended++;
        }
      })();
      const builtBeside = await timeRuns(counted ? perRound : 20, build);
      appending = false;
      await appender;
      if (!counted) continue;
      alone.push(...builtAlone);
      beside.push(...builtBeside);
    }
    report({ name: `${label}: socket daemon, context/build p99, alone`, value: percentile(alone, 99), unit: "ms", digits: 2 });
    report({ name: `${label}: socket daemon, context/build p99, beside a client appending in a loop`, value: percentile(beside, 99), unit: "ms", digits: 2 });
    report({
      name: `${label}: socket daemon, what the appending client adds to context/build p99`,
      value: percentile(beside, 99) - percentile(alone, 99),
      unit: "ms",
      digits: 2,
      target: { max: 10 },
      note: `${appended} appends meanwhile`,
    });
  } finally {
    await daemon.stop();
    home.remove();
  }
}

await measureEngine("SQLite", {});
const cluster = await startPostgresCluster();
const proxy = await startDelayProxy(postgresTarget(cluster.url), DELAY_MS);
const proxied = proxy.url(cluster.url);
const viaProxy = `PostgreSQL, ${DELAY_MS} ms proxy`;
try {
  const { appends } = await measureEngine(viaProxy, { BASE_CONTEXT_STORE_URL: proxied });
  await serverFloor(proxied, viaProxy, appends);
  const onSqlite = await importPiFile("SQLite", {});
  const onPostgres = await importPiFile("PostgreSQL, loopback", { BASE_CONTEXT_STORE_URL: cluster.url });
  // The import is bound by the CPU the daemon and the server share: its rate moves with the
  // machine, SQLite's in the same run with it. A third of SQLite's rate is where the absolute
  // target it replaces stood.
  report({
    name: "PostgreSQL import's rate as a share of SQLite's, same run",
    value: onPostgres / onSqlite,
    unit: "×",
    digits: 2,
    target: { min: 0.33 },
  });
  await socketNeighbours("SQLite", {});
  await socketNeighbours(viaProxy, { BASE_CONTEXT_STORE_URL: proxied });
  await fourDaemons(proxied, viaProxy);
} finally {
  await proxy.stop();
  cluster.stop();
}
