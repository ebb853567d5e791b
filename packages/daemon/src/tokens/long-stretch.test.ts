/**
 * Long whitespace-free (or all-whitespace) stretches are estimated from samples (exact-count.ts):
 * the cost per character is bounded whatever the input, ordinary text is still counted exactly,
 * and the estimate stays close to the exact count. Throughput is measured in bench/tokens.mjs.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { LONG_PIECE_MIN_CHARS, LONG_STRETCH_MIN_CHARS, loadExactCount } from "./encodings.js";
import { createExactCount, type EncodingApi } from "./exact-count.js";
import { CORPUS, generateProse } from "./fixtures/corpus.js";
import { mergeLongPiece } from "./long-piece-merge.js";

/** An encoding that records how many characters it was asked to count (1 token per 4). */
function recordingEncoding(): { api: EncodingApi; counted: number[] } {
  const counted: number[] = [];
  const core = { bytePairEncode: () => [], getBpeRankFromBytes: () => undefined, bytePairStringRankEncoder: new Map() };
  const api = {
    bytePairEncodingCoreProcessor: core,
    countTokens(text: string) {
      counted.push(text.length);
      return Math.ceil(text.length / 4);
    },
  };
  return { api, counted };
}

describe("long stretches", () => {
  it("count only samples of a long stretch, at most about 1/16 of it", () => {
    const { api, counted } = recordingEncoding();
    const count = createExactCount(api, mergeLongPiece, LONG_PIECE_MIN_CHARS, LONG_STRETCH_MIN_CHARS);
    for (const length of [LONG_STRETCH_MIN_CHARS, 100_000, 10_000_000]) {
      counted.length = 0;
      const estimate = count("x".repeat(length));
      const countedChars = counted.reduce((sum, chars) => sum + chars, 0);
      expect(countedChars).toBeLessThanOrEqual(Math.max(128, length / 16));
      expect(estimate).toBe(Math.ceil(length / 4));
    }
  });

  it("count text around a stretch exactly and the stretch by estimate", () => {
    const { api, counted } = recordingEncoding();
    const count = createExactCount(api, mergeLongPiece, LONG_PIECE_MIN_CHARS, LONG_STRETCH_MIN_CHARS);
    count(`before ${" ".repeat(5000)}${"=".repeat(50_000)} after`);
    // "before" exactly; the space stretch and the = stretch by samples; " after" exactly.
    expect(counted).toContain("before".length);
    expect(counted).toContain(" after".length);
    expect(Math.max(...counted)).toBeLessThanOrEqual(128);
  });

  it("leave ordinary text exact: every stretch shorter than the threshold", () => {
    const count = loadExactCount("o200k_base");
    // (A stretch of whitespace includes line breaks: the one below has threshold - 1 characters.)
    const text = `${generateProse(50_000)}\n${CORPUS.code}\n${"=".repeat(LONG_STRETCH_MIN_CHARS - 1)} x${" ".repeat(LONG_STRETCH_MIN_CHARS - 1)}x`;
    expect(count(text)).toBe(exactWithoutEstimates(text));
  });

  it.each([
    ["random base64", pseudoRandomBytes(1, 60_000).toString("base64"), 0.03],
    ["hex", pseudoRandomBytes(2, 30_000).toString("hex"), 0.03],
    ["short random base64", pseudoRandomBytes(3, 2300).toString("base64"), 0.08],
    ["a run of =", "=".repeat(200_000), 0.002],
    ["a run of spaces", `${" ".repeat(100_000)}x`, 0.002],
  ])("estimate %s within the stated error", (_name, text, tolerance) => {
    const reference = exactWithoutEstimates(text);
    const estimate = loadExactCount("o200k_base")(text);
    expect(Math.abs(estimate - reference) / reference).toBeLessThanOrEqual(tolerance);
  });

  it("replace gpt-tokenizer's merge cache (its eviction slows down with every distinct piece)", () => {
    loadExactCount("o200k_base");
    const core = (o200k as unknown as { bytePairEncodingCoreProcessor: { mergeCache?: unknown } }).bytePairEncodingCoreProcessor;
    expect(core.mergeCache).toBeUndefined();
  });
});

const o200k = createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base").default as EncodingApi;

/** The count with no stretch estimated: every piece merged exactly. */
function exactWithoutEstimates(text: string): number {
  return createExactCount(o200k, mergeLongPiece, LONG_PIECE_MIN_CHARS, Number.POSITIVE_INFINITY)(text);
}

/** Bytes from a fixed seed (mulberry32): the same "random" text on every run. */
function pseudoRandomBytes(seed: number, length: number): Buffer {
  let state = seed >>> 0;
  const bytes = Buffer.alloc(length);
  for (let index = 0; index < length; index++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    bytes[index] = ((t ^ (t >>> 14)) >>> 0) & 0xff;
  }
  return bytes;
}
