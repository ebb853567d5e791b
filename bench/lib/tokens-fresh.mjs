// Token-counting measurements that need a fresh process: `node tokens-fresh.mjs <scenario>`
// prints one JSON object. Used by bench/tokens.mjs; each scenario starts from nothing loaded.
import { daemonModule, fixtureModule, requireFromDaemon } from "./dist.mjs";
import { memoryOf, percentile, since } from "./stats.mjs";

/** Largest gap between ticks of a 1 ms interval while `work` runs: how long the loop was blocked. */
async function maxEventLoopStall(work) {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  const result = await work();
  clearInterval(timer);
  worst = Math.max(worst, performance.now() - last);
  return { result, stallMs: worst };
}

/**
 * One line that looks like a base64 blob: no spaces, no line breaks. Built flat, as JSON.parse
 * delivers strings (a concatenated one would be flattened on first use, which is not counting).
 */
function oneLongLine(chars) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  let state = 42;
  const bytes = Buffer.alloc(chars);
  for (let i = 0; i < chars; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    bytes[i] = alphabet.charCodeAt(state % 64);
  }
  return bytes.toString("latin1");
}

const scenarios = {
  /** The counter's encoding (compact form, compact-encoding.ts) loaded and used on this thread. */
  async "compact-startup"() {
    const before = memoryOf(process.pid);
    const start = performance.now();
    const { loadExactCount } = await daemonModule("tokens/encodings.js");
    const count = loadExactCount("o200k_base");
    count("hello world");
    const ms = since(start);
    return { ms, rssBeforeMB: before?.currentMB, peakRssMB: memoryOf(process.pid)?.peakMB };
  },

  /** gpt-tokenizer's own encoding object (what the counter used before the compact form). */
  async "gpt-tokenizer-startup"() {
    const before = memoryOf(process.pid);
    const start = performance.now();
    requireFromDaemon("gpt-tokenizer/encoding/o200k_base").default.countTokens("hello world");
    const ms = since(start);
    return { ms, rssBeforeMB: before?.currentMB, peakRssMB: memoryOf(process.pid)?.peakMB };
  },

  async "js-tiktoken-startup"() {
    const before = memoryOf(process.pid);
    const start = performance.now();
    const { Tiktoken } = requireFromDaemon("js-tiktoken/lite");
    const ranks = requireFromDaemon("js-tiktoken/ranks/o200k_base");
    new Tiktoken(ranks.default ?? ranks).encode("hello world", [], []);
    const ms = since(start);
    return { ms, rssBeforeMB: before?.currentMB, peakRssMB: memoryOf(process.pid)?.peakMB };
  },

  /** The daemon's path: first async count starts the worker; the calling thread must not stall. */
  async "counter-startup"() {
    const { createTokenCounter } = await daemonModule("tokens/index.js");
    const counter = createTokenCounter({ encoding: "o200k_base", estimator: "exact" });
    const start = performance.now();
    const { stallMs } = await maxEventLoopStall(() => counter.countTextAsync("hello world"));
    const ms = since(start);
    await counter.dispose();
    return { ms, stallMs, peakRssMB: memoryOf(process.pid)?.peakMB };
  },

  /** Round trips of small counts to the worker (the only thread that loads the encoding). */
  async "small-count-latency"() {
    const { createTokenCounter } = await daemonModule("tokens/index.js");
    const { generateProse } = await fixtureModule("tokens/fixtures/corpus.js");
    const texts = Array.from({ length: 2000 }, (_, i) => generateProse(1024, 100 + i));
    const measure = async (counter) => {
      await counter.countTextAsync("warm-up");
      const times = [];
      for (const text of texts) {
        const start = performance.now();
        await counter.countTextAsync(text);
        times.push(since(start));
      }
      await counter.dispose();
      return { p50: percentile(times, 50), p99: percentile(times, 99) };
    };
    const worker = await measure(createTokenCounter({ encoding: "o200k_base", estimator: "exact" }));
    return { worker };
  },

  /**
   * Counts a 10 MB input with countTextAsync while a 1 ms interval measures the event loop, and
   * times a small count asked for while the big one runs (interactive work must not queue behind it).
   */
  async stall() {
    const kind = process.argv[3];
    const { createTokenCounter } = await daemonModule("tokens/index.js");
    const { generateToolResult, generateProse } = await fixtureModule("tokens/fixtures/corpus.js");
    // Flat strings, as JSON.parse makes them ("=".repeat() makes a rope that costs ~20 ms to flatten).
    const text =
      kind === "tool-result"
        ? generateToolResult(10 * 2 ** 20)
        : kind === "one-line"
          ? oneLongLine(10 * 2 ** 20)
          : Buffer.alloc(2 * 2 ** 20, "=").toString("latin1");
    const counter = createTokenCounter({ encoding: "o200k_base", estimator: "exact" });
    await counter.countTextAsync("warm-up: the worker is started and loaded");
    const small = generateProse(1024, 7);
    let smallMs;
    const start = performance.now();
    const { result: tokens, stallMs } = await maxEventLoopStall(async () => {
      const big = counter.countTextAsync(text);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const smallStart = performance.now();
      await counter.countTextAsync(small);
      smallMs = since(smallStart);
      return big;
    });
    const ms = since(start);
    await counter.dispose();
    return { chars: text.length, tokens, ms, stallMs, smallMs };
  },
};

const scenario = scenarios[process.argv[2]];
if (!scenario) throw new Error(`unknown scenario ${process.argv[2]}`);
process.stdout.write(JSON.stringify(await scenario()) + "\n");
