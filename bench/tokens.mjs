// Token counting: throughput of the counter (the compact encoding the daemon's counting worker
// uses, with the long-piece merge), of gpt-tokenizer's own encoding object and of js-tiktoken,
// start-up cost, the cost of small counts, and how long the event loop stalls
// while the counter handles 10 MB. Fresh-process measurements run in bench/lib/tokens-fresh.mjs.
// MB/s here is millions of characters per second (the generated texts are nearly all ASCII).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { daemonModule, fixtureModule, repoRoot, requireFromDaemon } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median, since } from "./lib/stats.mjs";

const MB = 2 ** 20;
const run = promisify(execFile);

async function fresh(scenario, ...args) {
  const script = join(repoRoot, "bench", "lib", "tokens-fresh.mjs");
  const { stdout } = await run(process.execPath, [script, scenario, ...args], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout);
}

const { loadExactCount } = await daemonModule("tokens/encodings.js");
const { generateCode, generateProse, generateToolResult } = await fixtureModule("tokens/fixtures/corpus.js");
const { Tiktoken } = requireFromDaemon("js-tiktoken/lite");
const tiktokenRanks = requireFromDaemon("js-tiktoken/ranks/o200k_base");

// ---- start-up: first count in a fresh process -------------------------------------------------
progress("start-up (fresh processes)");
const compactStart = await fresh("compact-startup");
const gptStart = await fresh("gpt-tokenizer-startup");
const tiktokenStart = await fresh("js-tiktoken-startup");
const counterStart = await fresh("counter-startup");
report({
  name: "start-up, counter's compact o200k_base (load + first count)",
  value: compactStart.ms,
  unit: "ms",
  digits: 0,
  note: "blocks the thread that loads it (the worker)",
});
report({ name: "start-up, gpt-tokenizer o200k_base (load + first count)", value: gptStart.ms, unit: "ms", digits: 0 });
report({ name: "start-up, js-tiktoken o200k_base (load + first count)", value: tiktokenStart.ms, unit: "ms", digits: 0 });
report({ name: "start-up, counter's first countTextAsync (starts the worker)", value: counterStart.ms, unit: "ms", digits: 0 });
report({ name: "  event-loop stall meanwhile", value: counterStart.stallMs, unit: "ms", target: { max: 50 } });
report({
  name: "peak RSS, process that loaded the compact o200k_base",
  value: compactStart.peakRssMB,
  unit: "MB",
  digits: 0,
  note: `${compactStart.rssBeforeMB.toFixed(0)} MB before loading`,
});
report({
  name: "peak RSS, process that loaded gpt-tokenizer o200k_base",
  value: gptStart.peakRssMB,
  unit: "MB",
  digits: 0,
  note: `${gptStart.rssBeforeMB.toFixed(0)} MB before loading`,
});
report({ name: "peak RSS, process that loaded js-tiktoken o200k_base", value: tiktokenStart.peakRssMB, unit: "MB", digits: 0 });

// ---- throughput --------------------------------------------------------------------------------
progress("throughput");
const counterCount = loadExactCount("o200k_base");
const gptTokenizer = requireFromDaemon("gpt-tokenizer/encoding/o200k_base").default;
const stockOptions = { disallowedSpecial: new Set() };
const stockCount = (text) => gptTokenizer.countTokens(text, stockOptions);
const tiktoken = new Tiktoken(tiktokenRanks.default ?? tiktokenRanks);
const tiktokenCount = (text) => tiktoken.encode(text, [], []).length;

/** Million characters per second, best of `runs`, each on fresh text (gpt-tokenizer caches pieces). */
function throughput(count, makeText, runs = 3) {
  count(makeText(0).slice(0, 20_000)); // warm-up
  const rates = [];
  for (let run = 1; run <= runs; run++) {
    const text = makeText(run);
    const start = performance.now();
    count(text);
    rates.push(text.length / 1e6 / (since(start) / 1000));
  }
  return Math.max(...rates);
}

const inputs = [
  ["prose", (seed) => generateProse(MB, seed)],
  ["code", (seed) => generateCode(MB, seed)],
  ["tool output (logs, tables, code)", (seed) => generateToolResult(MB, seed)],
];
for (const [name, makeText] of inputs) {
  report({ name: `counter (compact o200k_base), 1 MB ${name}`, value: throughput(counterCount, makeText), unit: "MB/s", target: { min: 30 } });
  report({ name: `gpt-tokenizer stock, 1 MB ${name}`, value: throughput(stockCount, makeText), unit: "MB/s" });
  report({ name: `js-tiktoken, 1 MB ${name}`, value: throughput(tiktokenCount, makeText), unit: "MB/s" });
}
report({ name: "counter, 1 MB run of one character (=)", value: throughput(counterCount, () => "=".repeat(MB), 2), unit: "MB/s", digits: 2 });

// Issue: 1 MB of base64 took 2.5 s, 10 MB 90 s. Target: at least 10 MB/s (≤ 1 s per 10 MB).
const { randomBytes } = await import("node:crypto");
const base64 = (megabytes) => (seed) => randomBytes(Math.floor((megabytes * MB * 3) / 4) + seed).toString("base64");
report({ name: "counter, 10 MB base64 (one line)", value: throughput(counterCount, base64(10), 2), unit: "MB/s", target: { min: 10 }, note: "estimated from samples" });
report({ name: "counter, 2 MB of base64 in 1 KB words", value: throughput(counterCount, (seed) => base64(2)(seed).replace(/(.{1000})/g, "$1 "), 1), unit: "MB/s", digits: 2, note: "counted exactly: linear, not fast" });
report({ name: "counter, 20 MB run of one character (=)", value: throughput(counterCount, () => "=".repeat(20 * MB), 2), unit: "MB/s", target: { min: 10 } });

/** Milliseconds for one count. */
function timeOnce(count, text) {
  const start = performance.now();
  count(text);
  return since(start);
}
timeOnce(tiktokenCount, "=".repeat(500)); // warm-up
report({ name: "js-tiktoken, 2,000 × =", value: timeOnce(tiktokenCount, "=".repeat(2000)), unit: "ms" });
report({
  name: "js-tiktoken, 8,000 × = (once)",
  value: timeOnce(tiktokenCount, "=".repeat(8000)),
  unit: "ms",
  note: "quadratic in the run",
});
const gptCore = requireFromDaemon("gpt-tokenizer/encoding/o200k_base").default.bytePairEncodingCoreProcessor;
const stockMerge = (text) => gptCore.bytePairMerge(new TextEncoder().encode(text));
report({ name: "gpt-tokenizer stock merge, 8,000 × =", value: timeOnce(stockMerge, "=".repeat(8000)), unit: "ms", note: "quadratic; 100,000 × = takes ~5 s" });
report({ name: "counter (long-piece merge), 8,000 × =", value: timeOnce(counterCount, "=".repeat(8000)), unit: "ms" });

// ---- what one count costs by size (on whichever thread counts) ---------------------------------
progress("count cost by size");
for (const chars of [1024, 4096, 16384]) {
  const prose = [];
  const run = [];
  for (let i = 0; i < 5; i++) {
    prose.push(timeOnce(counterCount, generateProse(chars, 1000 + i)));
    run.push(timeOnce(counterCount, (i % 2 ? "-" : "=").repeat(chars - i)));
  }
  report({ name: `one count, ${chars.toLocaleString("en-US")} chars of prose`, value: median(prose), unit: "ms", digits: 2 });
  report({ name: `one count, ${chars.toLocaleString("en-US")} × one character`, value: median(run), unit: "ms", digits: 2, note: "worst case" });
}
const latency = await fresh("small-count-latency");
report({ name: "countTextAsync 1 KB via worker, p50", value: latency.worker.p50, unit: "ms", digits: 3 });
report({ name: "countTextAsync 1 KB via worker, p99", value: latency.worker.p99, unit: "ms", digits: 3 });

// ---- event loop while counting big inputs ------------------------------------------------------
const stallCases = [
  ["tool-result", "10 MB tool result (lines)", true],
  ["one-line", "10 MB one line, no spaces (base64-like)", false],
  ["one-char-run", "2 MB run of one character (=)", false],
];
for (const [kind, label, interactiveTarget] of stallCases) {
  progress(`event-loop stall: ${label}`);
  const result = await fresh("stall", kind);
  report({
    name: `countTextAsync ${label}: time`,
    value: result.ms,
    unit: "ms",
    digits: 0,
    note: `${result.tokens.toLocaleString("en-US")} tokens`,
  });
  report({ name: "  max event-loop stall", value: result.stallMs, unit: "ms", target: { max: 50 } });
  report({
    name: "  a 1 KB count asked for meanwhile",
    value: result.smallMs,
    unit: "ms",
    target: interactiveTarget ? { max: 50 } : undefined,
    note: interactiveTarget ? "" : "one line cannot be split: waits for it",
  });
}
