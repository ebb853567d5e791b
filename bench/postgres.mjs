// The same daemon on both engines: append latency, warm context/build and compaction/prepare on a
// compacted 10k-entry session, first on SQLite, then on a PostgreSQL server over loopback (a
// throwaway cluster this bench starts and stops); then four daemons appending to one PostgreSQL
// server. SQLite's own rows with targets are in the daemon, compaction and contention areas; the
// SQLite rows here are measured the same way as the PostgreSQL ones, for the side-by-side.
import { existsSync } from "node:fs";
import { daemonMain } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median, percentile, since, timeRuns } from "./lib/stats.mjs";

if (!existsSync(daemonMain)) {
  process.stdout.write(`the daemon is not built (${daemonMain} is missing): run \`pnpm build\`\n`);
  process.exit(1);
}
const { protocol: P, startDaemon, temporaryHome } = await import("./lib/daemon-process.mjs");
const { conversation } = await import("./lib/generated-session.mjs");
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

/** The rows measured on one engine; `env` selects it. */
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
  } finally {
    await daemon.stop();
    home.remove();
  }
}

/** Four daemons (four homes, one database) appending 1 KB entries to two shared sessions. */
async function fourDaemons(storeUrl) {
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
    report({ name: `PostgreSQL: four daemons, appends per second (all four)`, value: total / SECONDS, unit: "/s", digits: 0 });
    report({ name: `PostgreSQL: four daemons, entry/append 1 KB, p50 of ${total}`, value: median(latencies), unit: "ms", digits: 2 });
    report({ name: `PostgreSQL: four daemons, entry/append 1 KB, p99`, value: percentile(latencies, 99), unit: "ms", digits: 2 });
  } finally {
    await Promise.all(daemons.map((daemon) => daemon.stop()));
    for (const home of homes) home.remove();
  }
}

await measureEngine("SQLite", {});
const cluster = await startPostgresCluster();
try {
  await measureEngine("PostgreSQL", { BASE_CONTEXT_STORE_URL: cluster.url });
  await fourDaemons(cluster.url);
} finally {
  cluster.stop();
}
