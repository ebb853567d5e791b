/**
 * `mergeLongPiece` must produce exactly the tokens of gpt-tokenizer's own (quadratic) merge.
 * Compared directly against that merge, so pieces can be longer than js-tiktoken could handle.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { mergeLongPiece } from "./long-piece-merge.js";

interface CoreInternals {
  bytePairMerge(bytes: Uint8Array): number[];
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
}

const requireHere = createRequire(import.meta.url);
const cores = {
  o200k_base: coreOf("gpt-tokenizer/encoding/o200k_base"),
  cl100k_base: coreOf("gpt-tokenizer/encoding/cl100k_base"),
};

function coreOf(entryPoint: string): CoreInternals {
  const api = (requireHere(entryPoint) as { default: { bytePairEncodingCoreProcessor: CoreInternals } }).default;
  return api.bytePairEncodingCoreProcessor;
}

function pseudoRandomPiece(alphabet: string[], length: number, seed: number): string {
  let state = seed;
  let piece = "";
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    piece += alphabet[state % alphabet.length];
  }
  return piece;
}

const pieces: Record<string, string> = {
  "one byte": "=",
  "two bytes": "==",
  "8,000 equals signs": "=".repeat(8000),
  "3,001 spaces": " ".repeat(3001),
  "2,000 lowercase letters": "a".repeat(2000),
  "random lowercase": pseudoRandomPiece(["a", "b", "e", "r", "s", "t"], 2500, 7),
  "random punctuation": pseudoRandomPiece(["=", "-", "*", "#", "/", "+"], 2500, 11),
  "random CJK": pseudoRandomPiece(["漢", "字", "の", "中", "文"], 900, 13),
  "emoji": pseudoRandomPiece(["😀", "👍🏽", "🇫🇷"], 400, 17),
  "accented letters": pseudoRandomPiece(["é", "ü", "a", "ß"], 1500, 19),
};

describe.each(Object.entries(cores))("mergeLongPiece in %s", (_, core) => {
  it.each(Object.keys(pieces))("gives gpt-tokenizer's tokens for %s", (name) => {
    const bytes = new TextEncoder().encode(pieces[name]!);
    const merged = mergeLongPiece(bytes.length, (start, end) => core.getBpeRankFromBytes(bytes.subarray(start, end)));
    expect(merged).toEqual(core.bytePairMerge(bytes));
  });

  it("returns nothing for an empty piece", () => {
    expect(mergeLongPiece(0, () => undefined)).toEqual([]);
  });
});
