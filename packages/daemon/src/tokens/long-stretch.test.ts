/**
 * Long whitespace-free (or all-whitespace) stretches are estimated from samples (exact-count.ts):
 * the cost per character is bounded whatever the input, ordinary text is still counted exactly,
 * and the estimate stays close to the exact count. Throughput is measured in bench/tokens.mjs.
 */
import { describe, expect, it } from "vitest";
import { LONG_STRETCH_MIN_CHARS, loadExactCount, loadPlainCount } from "./encodings.js";
import { createExactCount } from "./exact-count.js";
import { CORPUS, generateProse } from "./fixtures/corpus.js";

/** A plain count that records how many characters it was asked to count (1 token per 4). */
function recordingCount(): { count: (text: string) => number; counted: number[] } {
  const counted: number[] = [];
  const count = (text: string) => {
    counted.push(text.length);
    return Math.ceil(text.length / 4);
  };
  return { count, counted };
}

describe("long stretches", () => {
  it("count only samples of a long stretch, at most about 1/16 of it", () => {
    const { count: plain, counted } = recordingCount();
    const count = createExactCount(plain, LONG_STRETCH_MIN_CHARS);
    for (const length of [LONG_STRETCH_MIN_CHARS, 100_000, 10_000_000]) {
      counted.length = 0;
      const estimate = count("x".repeat(length));
      const countedChars = counted.reduce((sum, chars) => sum + chars, 0);
      expect(countedChars).toBeLessThanOrEqual(Math.max(128, length / 16));
      expect(estimate).toBe(Math.ceil(length / 4));
    }
  });

  it("count text around a stretch exactly and the stretch by estimate", () => {
    const { count: plain, counted } = recordingCount();
    const count = createExactCount(plain, LONG_STRETCH_MIN_CHARS);
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
});

/** The count with no stretch estimated: every piece merged exactly. */
function exactWithoutEstimates(text: string): number {
  return loadPlainCount("o200k_base")(text);
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
