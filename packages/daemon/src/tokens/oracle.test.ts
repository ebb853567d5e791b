/**
 * The counter (compact encoding, compact-encoding.ts, with the long-piece merge) must count
 * exactly like js-tiktoken, the reference port of OpenAI's tiktoken, on every kind of text —
 * including special-token texts, which both must count as plain text, and random mixtures of
 * scripts, symbols and emoji from a fixed seed.
 */
import { Tiktoken } from "js-tiktoken/lite";
import cl100kRanks from "js-tiktoken/ranks/cl100k_base";
import o200kRanks from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import type { Encoding } from "./counter.js";
import { loadExactCount } from "./encodings.js";
import { CORPUS, generateCode, generateProse, generateToolResult } from "./fixtures/corpus.js";

const oracles: Record<Encoding, () => Tiktoken> = {
  o200k_base: lazily(() => new Tiktoken(o200kRanks)),
  cl100k_base: lazily(() => new Tiktoken(cl100kRanks)),
};

const samples: Record<string, string> = {
  ...CORPUS,
  everything: Object.values(CORPUS).join("\n"),
  generatedProse: generateProse(20_000),
  generatedCode: generateCode(20_000),
  generatedToolResult: generateToolResult(20_000),
  randomMixture: randomMixture(7, 20_000),
  randomMixture2: randomMixture(8, 20_000),
};

/**
 * Characters drawn (fixed seed) from ASCII, Latin-1, Greek, Cyrillic, Arabic, Devanagari, CJK,
 * Hangul, symbols and emoji, with spaces, digits and line breaks mixed in.
 */
function randomMixture(seed: number, length: number): string {
  const ranges = [
    [0x20, 0x7e], [0xa0, 0xff], [0x391, 0x3c9], [0x410, 0x44f], [0x621, 0x64a], [0x905, 0x939],
    [0x4e00, 0x4fff], [0xac00, 0xad00], [0x2190, 0x21ff], [0x1f600, 0x1f64f], [0x30, 0x39],
  ];
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let text = "";
  while (text.length < length) {
    const roll = next();
    if (roll < 0.12) text += " ";
    else if (roll < 0.14) text += "\n";
    else {
      const [low, high] = ranges[Math.floor(next() * ranges.length)]!;
      const run = 1 + Math.floor(next() * 6);
      for (let index = 0; index < run; index++) text += String.fromCodePoint(low! + Math.floor(next() * (high! - low! + 1)));
    }
  }
  return text;
}

describe.each(["o200k_base", "cl100k_base"] as const)("exact counts in %s", (encoding) => {
  it.each(Object.keys(samples))("match js-tiktoken on %s", (name) => {
    const text = samples[name]!;
    const expected = oracles[encoding]().encode(text, [], []).length;
    expect(loadExactCount(encoding)(text)).toBe(expected);
  });

  it("count special-token texts as ordinary text instead of throwing", () => {
    const count = loadExactCount(encoding);
    expect(count("<|endoftext|>")).toBeGreaterThan(1);
  });
});

function lazily<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}
