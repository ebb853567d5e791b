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
 * IMPORTANT: like `mergeLongPiece`, this function runs inside the counting worker from its source
 * text, so it must not reference anything outside its own body (types are erased and fine).
 */
import type { MergeLongPiece } from "./long-piece-merge.js";

/** The members of gpt-tokenizer's `BytePairEncodingCore` (3.4.0) this relies on. */
interface BytePairEncodingCoreInternals {
  bytePairEncode(piece: string): number[];
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  bytePairStringRankEncoder: Map<string, number>;
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
    internals.bytePairEncode = (piece: string): number[] => {
      if (piece.length < longPieceMinChars) return encodeShortPiece(piece);
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
  return (text: string): number => encodingApi.countTokens(text, options);
}
