/**
 * The compact form of an encoding: `parseRankList` reads gpt-tokenizer's rank-list module without
 * running it, and must give every rank the very bytes the module's own values have (strings as
 * UTF-8, byte arrays as they are); a format it does not know fails loudly. Counts against
 * js-tiktoken are in oracle.test.ts.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createCompactCount, parseRankList } from "./compact-encoding.js";
import { encodingFiles } from "./encodings.js";

const requireHere = createRequire(import.meta.url);
const utf8 = new TextEncoder();

describe.each(["o200k_base", "cl100k_base"] as const)("parseRankList (%s)", (encoding) => {
  it("gives every rank the bytes of the module's own value", () => {
    const { ranksPath } = encodingFiles(encoding);
    const { bytes, offsets } = parseRankList(readFileSync(ranksPath));
    const values = (requireHere(ranksPath) as { default: (string | number[])[] }).default;
    expect(offsets.length - 1).toBe(values.length);
    const mismatches: number[] = [];
    values.forEach((value, rank) => {
      const expected = typeof value === "string" ? utf8.encode(value) : Uint8Array.from(value);
      const actual = bytes.subarray(offsets[rank]!, offsets[rank + 1]!);
      if (Buffer.compare(Buffer.from(expected), Buffer.from(actual)) !== 0) mismatches.push(rank);
    });
    expect(mismatches).toEqual([]);
  });
});

describe("parseRankList on other input", () => {
  const parse = (text: string) => () => parseRankList(utf8.encode(text));

  it("reads strings with escapes and byte arrays, chunk after chunk", () => {
    const { bytes, offsets } = parseRankList(utf8.encode('const c0 = ["a", "\\n\\"\\\\", "\\u00e9", [255, 0]];\nconst c1 = ["é"];'));
    expect([...offsets]).toEqual([0, 1, 4, 6, 8, 10]);
    expect([...bytes]).toEqual([0x61, 0x0a, 0x22, 0x5c, 0xc3, 0xa9, 255, 0, 0xc3, 0xa9]);
  });

  it("fails loudly on a format it does not know", () => {
    expect(parse("module.exports = []")).toThrow(/no ranks found/);
    expect(parse("const c0 = [x]")).toThrow(/expected a string or an array of bytes/);
    expect(parse('const c0 = ["\\q"]')).toThrow(/unknown escape/);
    expect(parse("const c0 = [[300]]")).toThrow(/expected a byte value/);
    expect(parse('const c0 = ["\\ud800"]')).toThrow(/surrogate/);
  });
});

describe("createCompactCount", () => {
  it("merges the lowest-ranked pair first, the leftmost on ties", () => {
    // Ranks: a, b, c, then "ab" (3), "bc" (4), "abc" (5): "abc" → a+b first (rank 3), then ab+c.
    const table = parseRankList(utf8.encode('const c0 = ["a", "b", "c", "ab", "bc", "abc", "cc"];'));
    const { count } = createCompactCount(table, /[a-z]+|./gu, 128);
    expect(count("abc")).toBe(1);
    expect(count("abcc")).toBe(2); // abc + c (ab first, then abc; "cc" never forms)
    expect(count("ccc")).toBe(2); // cc + c: leftmost on ties
    expect(count("bca")).toBe(2); // bc + a
  });
});
