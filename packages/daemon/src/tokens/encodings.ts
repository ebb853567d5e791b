/**
 * Loading an encoding. Each encoding has its own gpt-tokenizer entry point, so only the
 * configured one is ever loaded — and only on first use, because loading blocks: about 0.35 s and
 * ~70 MB of peak RSS for o200k_base (bench/tokens.mjs measures it). The daemon loads it in its
 * counting worker only (worker-source.ts, by `encodingModulePath`); `loadExactCount` loads it on
 * the calling thread, for tests, benches and the oracle comparisons.
 *
 * gpt-tokenizer's CommonJS build is loaded with `require`, synchronously.
 */
import { createRequire } from "node:module";
import type { Encoding } from "./counter.js";
import { createExactCount, type CountExact, type EncodingApi } from "./exact-count.js";
import { mergeLongPiece } from "./long-piece-merge.js";

/**
 * Pieces from this many characters on are merged by `mergeLongPiece`. Measured per piece: at 128
 * characters gpt-tokenizer's merge takes 60–270 µs and `mergeLongPiece` 15–40 µs; at 32 they are
 * about even, and gpt-tokenizer caches repeated short pieces, so shorter ones stay with it.
 */
export const LONG_PIECE_MIN_CHARS = 128;

/**
 * Stretches of this many characters that are all whitespace or all non-whitespace are estimated
 * from samples instead of counted (exact-count.ts). Ordinary text has none: a word, a URL or a
 * line of code is far shorter, and even minified code has spaces. chunks.ts never splits inside one.
 */
export const LONG_STRETCH_MIN_CHARS = 2048;

const ENTRY_POINTS: Record<Encoding, string> = {
  o200k_base: "gpt-tokenizer/encoding/o200k_base",
  cl100k_base: "gpt-tokenizer/encoding/cl100k_base",
};

const requireFromHere = createRequire(import.meta.url);
const loaded = new Map<Encoding, CountExact>();

/** The file of an encoding's CommonJS entry point, for the worker to `require`. */
export function encodingModulePath(encoding: Encoding): string {
  return requireFromHere.resolve(ENTRY_POINTS[encoding]);
}

/** Exact counting on this thread; loads the encoding on first call (blocks, see above). */
export function loadExactCount(encoding: Encoding): CountExact {
  let count = loaded.get(encoding);
  if (!count) {
    const module = requireFromHere(ENTRY_POINTS[encoding]) as { default: EncodingApi };
    count = createExactCount(module.default, mergeLongPiece, LONG_PIECE_MIN_CHARS, LONG_STRETCH_MIN_CHARS);
    loaded.set(encoding, count);
  }
  return count;
}

/** Whether `loadExactCount(encoding)` would answer without loading anything. */
export function isExactCountLoaded(encoding: Encoding): boolean {
  return loaded.has(encoding);
}
