/**
 * Loading an encoding: its compact form (compact-encoding.ts), built from gpt-tokenizer's data
 * files, only for the configured encoding and only on first use, because loading blocks its
 * thread (bench/tokens.mjs measures it: bench/results/tokens.md). The daemon loads it in its
 * counting worker only (count-worker-main.ts, with `readEncoding`); `loadExactCount` loads it on the
 * calling thread, for tests, benches and the oracle comparisons.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createCompactCount, parseRankList, type CompactTables, type CountPlain } from "./compact-encoding.js";
import type { Encoding } from "./counter.js";
import { createExactCount, type CountExact } from "./exact-count.js";

/**
 * Pieces from this many bytes on are merged by `mergeLongPiece` (and not cached): measured per
 * piece, it is several times faster than a rescanning merge at this length, about even at 32
 * characters, and short pieces repeat, so their counts are cached.
 */
export const LONG_PIECE_MIN_CHARS = 128;

/**
 * Stretches of this many characters that are all whitespace or all non-whitespace are estimated
 * from samples instead of counted (exact-count.ts). Ordinary text has none: a word, a URL or a
 * line of code is far shorter, and even minified code has spaces. chunks.ts never splits inside one.
 */
export const LONG_STRETCH_MIN_CHARS = 2048;

/** Where an encoding's data comes from: gpt-tokenizer's rank list and pre-tokenizer regex. */
const SOURCES: Record<Encoding, { ranks: string; splitRegex: string }> = {
  o200k_base: { ranks: "gpt-tokenizer/bpeRanks/o200k_base", splitRegex: "O200K_TOKEN_SPLIT_REGEX" },
  cl100k_base: { ranks: "gpt-tokenizer/bpeRanks/cl100k_base", splitRegex: "CL100K_TOKEN_SPLIT_REGEX" },
};
const SPLIT_REGEX_MODULE = "gpt-tokenizer/encodingParams/constants";

const requireFromHere = createRequire(import.meta.url);
const loaded = new Map<Encoding, CountExact>();
const loadedPlain = new Map<Encoding, CountPlain>();

/**
 * An encoding's files (absolute, for the worker): the rank list, read as bytes (never run: see
 * compact-encoding.ts), and the module whose export `splitRegexName` is the pre-tokenizer regex.
 */
export function encodingFiles(encoding: Encoding): { ranksPath: string; splitRegexPath: string; splitRegexName: string } {
  const source = SOURCES[encoding];
  return {
    ranksPath: requireFromHere.resolve(source.ranks),
    splitRegexPath: requireFromHere.resolve(SPLIT_REGEX_MODULE),
    splitRegexName: source.splitRegex,
  };
}

/** The encoding's compact tables and pre-tokenizer regex, read on this thread (blocks). */
export function readEncoding(encoding: Encoding): { tables: CompactTables; splitRegex: RegExp } {
  const { ranksPath, splitRegexPath, splitRegexName } = encodingFiles(encoding);
  const splitRegex = (requireFromHere(splitRegexPath) as Record<string, RegExp>)[splitRegexName]!;
  return { tables: parseRankList(readFileSync(ranksPath)), splitRegex };
}

/**
 * Exact counting on this thread; loads the encoding on first call (blocks, see above). The daemon
 * never calls it: its counting worker does the same in count-worker-main.ts.
 */
export function loadExactCount(encoding: Encoding): CountExact {
  let count = loaded.get(encoding);
  if (!count) {
    count = createExactCount(loadPlainCount(encoding), LONG_STRETCH_MIN_CHARS);
    loaded.set(encoding, count);
  }
  return count;
}

/** Counting without the long-stretch estimate (every piece merged exactly): tests compare with it. */
export function loadPlainCount(encoding: Encoding): CountPlain {
  let count = loadedPlain.get(encoding);
  if (!count) {
    const { tables, splitRegex } = readEncoding(encoding);
    count = createCompactCount(tables, splitRegex, LONG_PIECE_MIN_CHARS).count;
    loadedPlain.set(encoding, count);
  }
  return count;
}
