// Daemon memory (RSS), median of fresh daemon processes: right after `initialize`, after 3 s idle
// (the counting worker has loaded the encoding by then: the start-up pause is 250 ms), and the
// peak under a load of appends (1 KB entries, batches, a 1 MB tool result) and context builds.
// Targets: ≤ 120 MB steady after idle, ≤ 160 MB peak. Before the encoding moved to the worker
// only, the idle daemon held two copies (main thread and worker): 202 MB, peaks of 224–232 MB.
import { existsSync } from "node:fs";
import { daemonMain } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median } from "./lib/stats.mjs";

if (!existsSync(daemonMain)) {
  process.stdout.write(`the daemon is not built (${daemonMain} is missing): run \`pnpm build\`\n`);
  process.exit(1);
}
const { protocol: P, startDaemon, temporaryHome } = await import("./lib/daemon-process.mjs");

const PROCESSES = Number(process.env.BENCH_MEMORY_PROCESSES ?? 5);
const IDLE_MS = 3000;
const message = (text) => ({ type: "message", message: { role: "user", content: text } });
const lorem = (index) => `${"lorem ipsum dolor sit amet ".repeat(38)}`.slice(0, 1000) + ` #${index}`;
const toolResult = Array.from({ length: 20_000 }, (_, i) => `line ${i}: ${"value=" + ((i * 7919) % 10007)} ok`).join("\n");

const initialized = [];
const idle = [];
const peaks = [];
for (let run = 0; run < PROCESSES; run++) {
  progress(`fresh daemon ${run + 1} of ${PROCESSES}`);
  const home = temporaryHome("memory");
  try {
    const daemon = await startDaemon(home.path);
    initialized.push(daemon.memory().currentMB);
    const { session } = await daemon.request(P.SessionCreate, { cwd: "/bench/memory" });
    await daemon.request(P.EntryAppend, { sessionId: session.id, entry: message("hello") });
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    idle.push(daemon.memory().currentMB);
    // Load: appends one by one and in batches, a large tool result, context builds.
    for (let i = 0; i < 1000; i++) await daemon.request(P.EntryAppend, { sessionId: session.id, entry: message(lorem(i)) });
    for (let i = 0; i < 10; i++) {
      const entries = Array.from({ length: 100 }, (_, j) => message(lorem(i * 100 + j)));
      await daemon.request(P.EntryAppendMany, { sessionId: session.id, entries });
    }
    await daemon.request(P.EntryAppend, { sessionId: session.id, entry: message(toolResult.slice(0, 1 << 20)) });
    for (let i = 0; i < 5; i++) await daemon.request(P.ContextBuild, { sessionId: session.id });
    peaks.push(daemon.memory().peakMB);
    await daemon.stop();
  } finally {
    home.remove();
  }
}

const range = (values) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)} MB over ${values.length} processes`;
report({ name: "daemon RSS right after initialize (median)", value: median(initialized), unit: "MB", digits: 0, note: range(initialized) });
report({
  name: "daemon RSS after 3 s idle (median)",
  value: median(idle),
  unit: "MB",
  digits: 0,
  target: { max: 120 },
  note: `${range(idle)}; was 202 MB`,
});
report({
  name: "daemon peak RSS under load (median)",
  value: median(peaks),
  unit: "MB",
  digits: 0,
  target: { max: 160 },
  note: `${range(peaks)}; was 224–232 MB`,
});
