// Plugin host costs (docs/design.md#plugins), against the built daemon: `pnpm build && node bench/plugins.mjs`.
// 1. Hook round trip of a plugin that does no work: what the host adds to every hook call
//    (serialize, post to the worker, run, post back, validate). Target: p50 ≤ 1 ms.
// 2. Hot reload: from an editor-style save (write a temp file, rename it over the entry) to the
//    new version serving calls. Target: ≤ 500 ms.
// Exits 1 when a target is missed. Prints one line per measurement.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { PluginHost } from "../packages/daemon/dist/plugins/index.js";
import { defaultSettings } from "../packages/daemon/dist/settings/index.js";

const ROUND_TRIP_P50_MS = 1;
const RELOAD_MS = 500;
const CALLS = 2_000;
const RELOADS = 10;

process.env.BASE_CONTEXT_LOG ??= "warn"; // the host logs every reload at info level

const home = mkdtempSync(join(tmpdir(), "bc-bench-plugins-"));
const root = join(home, "plugins");

function writePlugin(name, entry, source) {
  mkdirSync(join(root, name), { recursive: true });
  writeFileSync(
    join(root, name, "package.json"),
    JSON.stringify({ name, version: "1.0.0", type: "module", baseContext: { apiVersion: 1, main: entry } }),
  );
  writeFileSync(join(root, name, entry), source);
}

function atomicSave(path, text) {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

const noop = (marker) =>
  `export default { name: "bench", apiVersion: 1, hooks: { session_before_tree() { return { summary: { summary: ${JSON.stringify(marker)} } }; } } };\n`;
const typedNoop = (marker) =>
  `interface Answer { summary: { summary: string } }\nconst answer = (): Answer => ({ summary: { summary: ${JSON.stringify(marker)} } });\n` +
  `export default { name: "bench-ts", apiVersion: 1, hooks: { session_before_tree: answer } };\n`;

/** A realistic small event: a branch of 50 entries with some text. */
function treeEvent(entries) {
  const entriesToSummarize = Array.from({ length: entries }, (_, i) => ({
    type: "message",
    id: `e${i}`,
    parentId: i === 0 ? null : `e${i - 1}`,
    timestamp: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    message:
      i % 2 === 0
        ? { role: "user", content: `question ${i} `.repeat(20), timestamp: i }
        : { role: "assistant", content: [{ type: "text", text: `answer ${i} `.repeat(40) }], timestamp: i },
  }));
  return {
    preparation: { targetId: "e0", oldLeafId: `e${entries - 1}`, commonAncestorId: "e0", entriesToSummarize, userWantsSummary: true },
  };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function roundTrips(host, pluginName, entries, calls) {
  const settings = defaultSettings();
  settings.plugins.order = [pluginName];
  const event = treeEvent(entries);
  for (let i = 0; i < Math.min(200, calls); i++) await host.runTreeHook(event, { settings }); // warm-up: JIT, first messages
  const times = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    const run = await host.runTreeHook(event, { settings });
    times.push(performance.now() - start);
    if (run.kind !== "result") throw new Error(`unexpected run: ${JSON.stringify(run)}`);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), bytes: JSON.stringify(event).length };
}

/** Save → the new generation serving, measured by polling the host's list. */
async function reloads(host, name, entry, source) {
  const times = [];
  for (let i = 2; i < 2 + RELOADS; i++) {
    const start = performance.now();
    atomicSave(join(root, name, entry), source(`v${i}`));
    for (;;) {
      const info = (await host.list()).find((plugin) => plugin.name === name);
      if (info?.generation === i && info.status === "active") break;
      if (performance.now() - start > 5_000) throw new Error(`${name} generation ${i} did not serve within 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    times.push(performance.now() - start);
    // Saves come at a person's pace: the old worker has ended and a standby thread is warm again.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  times.sort((a, b) => a - b);
  return { median: percentile(times, 0.5), worst: times[times.length - 1] };
}

writePlugin("bench", "index.js", noop("v1"));
writePlugin("bench-ts", "index.ts", typedNoop("v1"));
const host = new PluginHost({ home });
let failed = false;
try {
  const started = performance.now();
  await host.start();
  const startMs = performance.now() - started;
  process.stdout.write(`plugins: host start with 2 plugins (1 TypeScript) ${startMs.toFixed(0)} ms\n`);

  for (const [entries, calls] of [
    [50, CALLS],
    [2_000, 100],
  ]) {
    const { p50, p95, bytes } = await roundTrips(host, "bench", entries, calls);
    const verdict = entries === 50 ? (p50 <= ROUND_TRIP_P50_MS ? "ok" : "TOO SLOW") : "(large event, no target)";
    if (entries === 50 && p50 > ROUND_TRIP_P50_MS) failed = true;
    process.stdout.write(
      `plugins: hook round trip, ${entries}-entry event (${Math.round(bytes / 1024)} KiB): p50 ${p50.toFixed(3)} ms, p95 ${p95.toFixed(3)} ms over ${calls} calls (target p50 ≤ ${ROUND_TRIP_P50_MS} ms) ${verdict}\n`,
    );
  }

  for (const [name, entry, source] of [
    ["bench", "index.js", noop],
    ["bench-ts", "index.ts", typedNoop],
  ]) {
    const { median, worst } = await reloads(host, name, entry, source);
    const verdict = worst <= RELOAD_MS ? "ok" : "TOO SLOW";
    if (worst > RELOAD_MS) failed = true;
    process.stdout.write(
      `plugins: hot reload ${entry} save → new version serving: median ${median.toFixed(0)} ms, worst ${worst.toFixed(0)} ms of ${RELOADS} (target ≤ ${RELOAD_MS} ms) ${verdict}\n`,
    );
  }
} finally {
  await host.dispose();
  rmSync(home, { recursive: true, force: true });
}
if (failed) process.exitCode = 1;
