// Times the extractive summarizer on a 200k-token range: it must stay under 200 ms (docs/retention.md).
// Runs against the built daemon: `pnpm build && node bench/extractive.mjs`. Exports nothing.
import { performance } from "node:perf_hooks";
import { extractiveSummary } from "../packages/daemon/dist/summarizer/index.js";
import { fixtureModule } from "./lib/dist.mjs";

const { largeSession } = await fixtureModule("summarizer/extractive/fixtures.js");

const TARGET_TOKENS = 200_000;
const BUDGET_MS = 200;
const RUNS = 5;

const messages = largeSession(TARGET_TOKENS);
const chars = JSON.stringify(messages).length;
const request = { kind: "history", messages, maxTokens: Math.floor(0.8 * 16_384) };

extractiveSummary(request); // warm-up: JIT and regex compilation are not what we measure
const times = [];
let summary = "";
for (let i = 0; i < RUNS; i++) {
  const start = performance.now();
  summary = extractiveSummary(request);
  times.push(performance.now() - start);
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
const worst = times[times.length - 1];
const verdict = worst <= BUDGET_MS ? "ok" : "TOO SLOW";

process.stdout.write(
  `extractive summarizer: ${messages.length} messages, ~${Math.round(chars / 4 / 1000)}k tokens → ${summary.length} chars; ` +
    `median ${median.toFixed(1)} ms, worst ${worst.toFixed(1)} ms of ${RUNS} (budget ${BUDGET_MS} ms) ${verdict}\n`,
);
if (worst > BUDGET_MS) process.exitCode = 1;
