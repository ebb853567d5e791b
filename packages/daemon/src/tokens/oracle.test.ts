/**
 * gpt-tokenizer (with the long-piece merge) must count exactly like js-tiktoken, the reference
 * port of OpenAI's tiktoken, on every kind of text — including special-token texts, which both
 * must count as plain text.
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
};

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
