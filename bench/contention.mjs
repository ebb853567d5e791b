// Four daemon processes on one database (one BASE_CONTEXT_HOME), each with a client appending
// 1 KB entries one after another for a few seconds: the latency each client sees per
// entry/append (p50 / p99 / max over all four). Two sessions, each shared by two daemons, so
// writers of one session race for its leaf as well as for SQLite's write lock.
import { existsSync } from "node:fs";
import { daemonMain } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median, percentile } from "./lib/stats.mjs";

if (!existsSync(daemonMain)) {
  process.stdout.write(`the daemon is not built (${daemonMain} is missing): run \`pnpm build\`\n`);
  process.exit(1);
}
const { protocol: P, startDaemon, temporaryHome } = await import("./lib/daemon-process.mjs");

const DAEMONS = 4;
const SECONDS = Number(process.env.BENCH_CONTENTION_SECONDS ?? 10);
const entry = (daemon, index) => ({
  type: "message",
  message: { role: "user", content: `${"lorem ipsum dolor sit amet ".repeat(38)}`.slice(0, 1000) + ` d${daemon}#${index}` },
});

const home = temporaryHome("contention");
try {
  progress(`${DAEMONS} daemons appending for ${SECONDS} s`);
  const daemons = await Promise.all(Array.from({ length: DAEMONS }, () => startDaemon(home.path)));
  const sessions = [];
  for (let i = 0; i < 2; i++) sessions.push((await daemons[0].request(P.SessionCreate, { cwd: "/bench/contention" })).session.id);
  // Warm-up: every daemon's first appends load its tokenizer and statements.
  await Promise.all(daemons.map(async (daemon, d) => {
    for (let i = 0; i < 20; i++) await daemon.request(P.EntryAppend, { sessionId: sessions[d % 2], entry: entry(d, -i) });
  }));
  const latencies = [];
  const deadline = performance.now() + SECONDS * 1000;
  const counts = await Promise.all(daemons.map(async (daemon, d) => {
    let appended = 0;
    while (performance.now() < deadline) {
      const started = performance.now();
      await daemon.request(P.EntryAppend, { sessionId: sessions[d % 2], entry: entry(d, appended) });
      latencies.push(performance.now() - started);
      appended++;
    }
    return appended;
  }));
  const total = counts.reduce((sum, count) => sum + count, 0);
  report({ name: `four daemons, entry/append 1 KB, p50 of ${total}`, value: median(latencies), unit: "ms", digits: 2 });
  report({ name: "four daemons, entry/append 1 KB, p99", value: percentile(latencies, 99), unit: "ms", digits: 2, target: { max: 15 } });
  report({ name: "four daemons, entry/append 1 KB, max", value: Math.max(...latencies), unit: "ms", digits: 1, target: { max: 250 } });
  report({ name: "four daemons, appends per second (all four)", value: total / SECONDS, unit: "/s", digits: 0 });
  await Promise.all(daemons.map((daemon) => daemon.stop()));
} finally {
  home.remove();
}
