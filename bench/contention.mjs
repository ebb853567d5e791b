// Several writers on one database (one BASE_CONTEXT_HOME): the latency each client sees per
// entry/append (p50 / p99 / max over all clients), in three set-ups.
// - Four daemon processes, each with a client appending 1 KB entries one after another: the worst
//   case for SQLite's write lock. Two sessions, each shared by two daemons, so writers of one
//   session race for its leaf as well as for the lock.
// - Real use: two daemons (two editor windows) at an agent's pace, each replaying the messages of
//   the real pi session in the corpus with their recorded gaps shortened a hundredfold (capped at
//   250 ms), so collisions are far more frequent than in real use.
// - Many writers served the recommended way: one `serve --socket` daemon, four clients appending
//   one after another.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { daemonMain, repoRoot } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median, percentile } from "./lib/stats.mjs";

if (!existsSync(daemonMain)) {
  process.stdout.write(`the daemon is not built (${daemonMain} is missing): run \`pnpm build\`\n`);
  process.exit(1);
}
const { protocol: P, startDaemon, startSocketDaemon, temporaryHome } = await import("./lib/daemon-process.mjs");

const SECONDS = Number(process.env.BENCH_CONTENTION_SECONDS ?? 10);
const PI_SESSION = join(repoRoot, "..", "shared", "corpus", "pi-large-session.jsonl");
const PACE_SPEED_UP = 100;
const LONGEST_PAUSE_MS = 250;

const entry = (writer, index) => ({
  type: "message",
  message: { role: "user", content: `${"lorem ipsum dolor sit amet ".repeat(38)}`.slice(0, 1000) + ` w${writer}#${index}` },
});

function reportLatencies(label, latencies, seconds, targets = {}) {
  report({ name: `${label}, entry/append, p50 of ${latencies.length}`, value: median(latencies), unit: "ms", digits: 2 });
  report({ name: `${label}, entry/append, p99`, value: percentile(latencies, 99), unit: "ms", digits: 2, target: targets.p99 });
  report({ name: `${label}, entry/append, max`, value: Math.max(...latencies), unit: "ms", digits: 1, target: targets.max });
  if (targets.throughput) report({ name: `${label}, appends per second (all)`, value: latencies.length / seconds, unit: "/s", digits: 0 });
}

/** Each writer appends one entry after another until the deadline, to sessions[writer % 2]. */
async function appendFlatOut(writers, sessions) {
  await Promise.all(writers.map(async (writer, w) => {
    for (let i = 0; i < 20; i++) await writer.request(P.EntryAppend, { sessionId: sessions[w % 2], entry: entry(w, -i) });
  }));
  const latencies = [];
  const deadline = performance.now() + SECONDS * 1000;
  await Promise.all(writers.map(async (writer, w) => {
    for (let appended = 0; performance.now() < deadline; appended++) {
      const started = performance.now();
      await writer.request(P.EntryAppend, { sessionId: sessions[w % 2], entry: entry(w, appended) });
      latencies.push(performance.now() - started);
    }
  }));
  return latencies;
}

async function fourDaemons() {
  const home = temporaryHome("contention");
  try {
    progress(`four daemons appending for ${SECONDS} s`);
    const daemons = await Promise.all(Array.from({ length: 4 }, () => startDaemon(home.path)));
    const sessions = [];
    for (let i = 0; i < 2; i++) sessions.push((await daemons[0].request(P.SessionCreate, { cwd: "/bench/contention" })).session.id);
    const latencies = await appendFlatOut(daemons, sessions);
    // The p99 target was 15 ms with the writer gate; it was dropped on purpose (docs/design.md,
    // "Mechanisms kept and dropped"), and this flat-out row is what that gave up.
    reportLatencies("four daemons, 1 KB", latencies, SECONDS, { p99: { max: 25 }, max: { max: 250 }, throughput: true });
    await Promise.all(daemons.map((daemon) => daemon.stop()));
  } finally {
    home.remove();
  }
}

/** The pi session's messages with the pause before each (recorded gap, shortened and capped). */
function paceOfRealSession() {
  const messages = readFileSync(PI_SESSION, "utf8").trim().split("\n").map((line) => JSON.parse(line)).filter((e) => e.type === "message");
  return messages.map((message, i) => {
    const gap = i === 0 ? 0 : Date.parse(message.timestamp) - Date.parse(messages[i - 1].timestamp);
    return { entry: { type: "message", message: message.message }, pauseMs: Math.min(LONGEST_PAUSE_MS, Math.max(0, gap) / PACE_SPEED_UP) };
  });
}

async function twoDaemonsAtAgentPace() {
  if (!existsSync(PI_SESSION)) {
    process.stdout.write("two daemons at an agent's pace: skipped, the corpus (../shared/corpus beside the repository) is missing\n");
    return;
  }
  const replay = paceOfRealSession();
  const home = temporaryHome("contention-pace");
  try {
    // Appends are sparse here, so it runs twice as long for as many samples in the tail.
    const seconds = 2 * SECONDS;
    progress(`two daemons replaying a real session at an agent's pace for ${seconds} s`);
    const daemons = await Promise.all([startDaemon(home.path), startDaemon(home.path)]);
    const sessions = await Promise.all(daemons.map(async (daemon, d) => {
      const sessionId = (await daemon.request(P.SessionCreate, { cwd: `/bench/agent-${d}` })).session.id;
      // Warm-up: the first appends load the tokenizer and the statements.
      for (let i = 0; i < 20; i++) await daemon.request(P.EntryAppend, { sessionId, entry: replay[i].entry });
      return sessionId;
    }));
    const latencies = [];
    const deadline = performance.now() + seconds * 1000;
    await Promise.all(daemons.map(async (daemon, d) => {
      const sessionId = sessions[d];
      // The two replays start half a session apart, so their bursts do not line up by design.
      for (let i = d * Math.floor(replay.length / 2); performance.now() < deadline; i = (i + 1) % replay.length) {
        await new Promise((resolve) => setTimeout(resolve, replay[i].pauseMs));
        const started = performance.now();
        await daemon.request(P.EntryAppend, { sessionId, entry: replay[i].entry });
        latencies.push(performance.now() - started);
      }
    }));
    reportLatencies("two daemons at an agent's pace", latencies, seconds);
    await Promise.all(daemons.map((daemon) => daemon.stop()));
  } finally {
    home.remove();
  }
}

async function socketDaemonFourClients() {
  const home = temporaryHome("contention-socket");
  try {
    progress(`one socket daemon, four clients appending for ${SECONDS} s`);
    const daemon = await startSocketDaemon(home.path);
    try {
      const clients = [];
      for (let c = 0; c < 4; c++) clients.push(await daemon.connect(`bench-${c}`));
      const sessions = [];
      for (let i = 0; i < 2; i++) sessions.push((await clients[0].request(P.SessionCreate, { cwd: "/bench/contention" })).session.id);
      const latencies = await appendFlatOut(clients, sessions);
      reportLatencies("socket daemon, four clients, 1 KB", latencies, SECONDS, { throughput: true });
    } finally {
      await daemon.stop();
    }
  } finally {
    home.remove();
  }
}

await fourDaemons();
await twoDaemonsAtAgentPace();
await socketDaemonFourClients();
