// Times the extractive summarizer on a 200k-token range: it must stay under 200 ms (docs/retention.md);
// and on as much text that defeats naive patterns (long tokens, dotted runs, long lines: its unit
// test checks what it keeps), under the same budget, its time growing linearly: 4× the text,
// compared in this run with 1×.
// Runs against the built daemon: `pnpm build && node bench/extractive.mjs`. Exports nothing.
import { performance } from "node:perf_hooks";
import { extractiveSummary } from "../packages/daemon/dist/summarizer/index.js";
import { fixtureModule } from "./lib/dist.mjs";
import { report } from "./lib/report.mjs";

const { hostileText, largeSession } = await fixtureModule("summarizer/extractive/fixtures.js");

const TARGET_TOKENS = 200_000;
const BUDGET_MS = 200;
/** Linear is 4 for 4× the text, quadratic 16: room for the machine's noise, none for a square. */
const HOSTILE_GROWTH_MAX = 6;
const RUNS = 5;
const maxTokens = Math.floor(0.8 * 16_384);

/** Worst and median of RUNS timed summaries of `messages`, after a warm-up (JIT and regex compilation are not what we measure). */
function time(messages) {
  const request = { kind: "history", messages, maxTokens };
  let summary = extractiveSummary(request);
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    summary = extractiveSummary(request);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], worst: times[times.length - 1], summary };
}

const messages = largeSession(TARGET_TOKENS);
const large = time(messages);
report({
  name: `${messages.length} messages, ~${Math.round(JSON.stringify(messages).length / 4 / 1000)}k tokens: worst of ${RUNS}`,
  value: large.worst,
  unit: "ms",
  target: { max: BUDGET_MS },
  note: `median ${large.median.toFixed(1)} ms → ${large.summary.length} chars`,
});

const hostile = time(hostileText(1));
const hostile4 = time(hostileText(4));
if (!hostile4.summary.includes("src/app.ts")) throw new Error("the summary of 4× the hostile text lost src/app.ts");
report({ name: `hostile text (~700k chars): worst of ${RUNS}`, value: hostile.worst, unit: "ms", target: { max: BUDGET_MS } });
report({
  name: "hostile text ×4 / ×1 (medians; linear is 4)",
  value: hostile4.median / hostile.median,
  unit: "×",
  target: { max: HOSTILE_GROWTH_MAX },
  note: `${hostile.median.toFixed(1)} → ${hostile4.median.toFixed(1)} ms`,
});
