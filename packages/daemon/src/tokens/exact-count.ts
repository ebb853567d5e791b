/**
 * Exact token counting with gpt-tokenizer, hardened for long pieces.
 *
 * gpt-tokenizer's own loop (pre-tokenize, look up, merge) is kept; only the merge of pieces of
 * at least `longPieceMinChars` characters is replaced by `mergeLongPiece` (see there why). That
 * needs two private members of gpt-tokenizer's `BytePairEncodingCore`; the version is pinned and
 * the oracle test against js-tiktoken fails if they change. Long pieces also bypass gpt-tokenizer's
 * merge cache, which would otherwise keep multi-megabyte strings alive as cache keys.
 *
 * Special-token texts such as `<|endoftext|>` are counted as ordinary text: entries are data, not
 * prompts, and must never make counting throw.
 *
 * Long stretches are estimated, not counted: a stretch of at least `longStretchMinChars` characters
 * that are all whitespace or all non-whitespace (a base64 blob, a hex dump, 20 MB of `=`, minified
 * code without spaces) costs gpt-tokenizer ~1 µs per character or more however it is merged, so
 * such a stretch is counted exactly on evenly spaced sample windows (about 1/32 of it, at most 64
 * windows) and the rest is extrapolated from their tokens per character. Text without such a
 * stretch (ordinary prose, code, JSON, tool output) is counted exactly, as before; docs/guarantees.md
 * states the error bound measured on base64 and single-character runs.
 *
 * gpt-tokenizer's own merge cache is replaced: its LRU evicts with `keys().next()`, which in V8
 * walks over every deleted slot at the front of the Map, so once 100,000 distinct pieces are seen
 * (1 MB of base64 has 300,000) each new piece costs time proportional to the evictions so far.
 * The replacement is cleared when full, which costs nothing per piece.
 *
 * IMPORTANT: like `mergeLongPiece`, this function runs inside the counting worker from its source
 * text, so it must not reference anything outside its own body (types are erased and fine).
 */
import type { MergeLongPiece } from "./long-piece-merge.js";

/** The members of gpt-tokenizer's `BytePairEncodingCore` (3.4.0) this relies on. */
interface BytePairEncodingCoreInternals {
  bytePairEncode(piece: string): number[];
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  bytePairStringRankEncoder: Map<string, number>;
  mergeCacheSize?: number;
  mergeCache?: Map<string, number[]>;
}

/** What this needs of an encoding module's default export (a `GptEncoding`). */
export interface EncodingApi {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

export type CountExact = (text: string) => number;

export function createExactCount(
  encodingApi: EncodingApi,
  mergeLongPiece: MergeLongPiece,
  longPieceMinChars: number,
  longStretchMinChars: number,
): CountExact {
  const core = (encodingApi as unknown as { bytePairEncodingCoreProcessor?: Partial<BytePairEncodingCoreInternals> })
    .bytePairEncodingCoreProcessor;
  if (
    !core ||
    typeof core.bytePairEncode !== "function" ||
    typeof core.getBpeRankFromBytes !== "function" ||
    !(core.bytePairStringRankEncoder instanceof Map)
  ) {
    throw new Error("gpt-tokenizer's internals are not the ones this counter was written for (3.4.0)");
  }
  const internals = core as BytePairEncodingCoreInternals;
  // One encoding module is shared by every counter of a thread: patch it once.
  const patched = Symbol.for("base-context.long-piece-merge");
  const marked = internals as unknown as Record<symbol, boolean>;
  if (!marked[patched]) {
    marked[patched] = true;
    const encodeShortPiece = internals.bytePairEncode.bind(internals);
    const stringRanks = internals.bytePairStringRankEncoder;
    const utf8 = new TextEncoder();
    const asciiOnly = /^[\x00-\x7f]*$/;
    // gpt-tokenizer's LRU off (see above); this cache takes its place for short pieces.
    internals.mergeCacheSize = 0;
    internals.mergeCache = undefined;
    const shortPieceCache = new Map<string, number[]>();
    const SHORT_PIECE_CACHE_SIZE = 100_000;
    internals.bytePairEncode = (piece: string): number[] => {
      if (piece.length < longPieceMinChars) {
        let tokens = shortPieceCache.get(piece);
        if (tokens === undefined) {
          tokens = encodeShortPiece(piece);
          if (shortPieceCache.size >= SHORT_PIECE_CACHE_SIZE) shortPieceCache.clear();
          shortPieceCache.set(piece, tokens);
        }
        return tokens;
      }
      if (asciiOnly.test(piece)) {
        // One byte per character: ranges of the string are ranges of the bytes, and string
        // lookups avoid gpt-tokenizer's per-lookup UTF-8 validation and decoding.
        return mergeLongPiece(piece.length, (start, end) => stringRanks.get(piece.slice(start, end)));
      }
      const bytes = utf8.encode(piece);
      return mergeLongPiece(bytes.length, (start, end) => internals.getBpeRankFromBytes(bytes.subarray(start, end)));
    };
  }
  const options = { disallowedSpecial: new Set<string>() };
  const countExactly = (text: string): number => (text.length === 0 ? 0 : encodingApi.countTokens(text, options));

  // JavaScript's \s, by code unit (a regex per character would cost more than the counting it saves).
  const isSpace = (code: number): boolean =>
    code === 32 || (code >= 9 && code <= 13) || code === 160 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
  const SAMPLE_CHARS = 128;
  const MAX_SAMPLES = 64;
  /** Tokens of a long stretch, from samples (see above): at least 1, at most its length. */
  const estimateStretch = (stretch: string): number => {
    const windows = Math.min(MAX_SAMPLES, Math.max(1, Math.floor(stretch.length / (32 * SAMPLE_CHARS))));
    const gap = windows === 1 ? 0 : (stretch.length - SAMPLE_CHARS) / (windows - 1);
    let sampledTokens = 0;
    for (let index = 0; index < windows; index++) {
      const start = Math.floor(index * gap);
      sampledTokens += countExactly(stretch.slice(start, start + SAMPLE_CHARS));
    }
    const estimate = Math.round((stretch.length * sampledTokens) / (windows * SAMPLE_CHARS));
    return Math.min(stretch.length, Math.max(1, estimate));
  };

  return (text: string): number => {
    if (text.length < longStretchMinChars) return countExactly(text);
    let total = 0;
    let exactFrom = 0;
    let stretchStart = 0;
    for (let index = 1; index <= text.length; index++) {
      if (index < text.length && isSpace(text.charCodeAt(index)) === isSpace(text.charCodeAt(stretchStart))) continue;
      if (index - stretchStart >= longStretchMinChars) {
        total += countExactly(text.slice(exactFrom, stretchStart)) + estimateStretch(text.slice(stretchStart, index));
        exactFrom = index;
      }
      stretchStart = index;
    }
    return exactFrom === 0 ? countExactly(text) : total + countExactly(text.slice(exactFrom));
  };
}
