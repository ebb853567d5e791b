import { describe, expect, it } from "vitest";
import { safeSplits } from "./chunks.js";
import { loadExactCount } from "./encodings.js";
import { CORPUS, generateCode, generateProse, generateToolResult } from "./fixtures/corpus.js";

/** `text` cut at every split `safeSplits` yields, all at once (the counter cuts it in slices). */
function splitAtPieceBoundaries(text: string, targetChars: number): string[] {
  const chunks: string[] = [];
  let start = 0;
  for (const split of safeSplits(text, targetChars)) {
    if (split === null) continue;
    chunks.push(text.slice(start, split));
    start = split;
  }
  chunks.push(text.slice(start));
  return chunks;
}

const texts: Record<string, string> = {
  prose: generateProse(60_000),
  code: generateCode(60_000),
  toolResult: generateToolResult(60_000),
  // Everything that might glue across a split: slashes, indentation, blank lines, CRLF,
  // punctuation runs, long runs, contractions, combining marks, non-ASCII, emoji.
  corpus: Object.values(CORPUS).join("\n").repeat(8),
  tricky: "};\n// comment\n/* block */\n\n\n  indented\r\n\r\nword\n=====\n-----\n漢字\n😀\n'quote\n".repeat(400),
  oneLineJson: JSON.stringify(Array.from({ length: 800 }, (_, i) => ({ id: `a${i}b`, name: "Zoë's item", tags: ["x-1", "y/2"] }))),
  oneLineMinified: "function a(b,c){return b.map(function(d){return d*c}).filter(Boolean)}var e=a([1,2,3],4);".repeat(600),
  // Base64 in stretches shorter than LONG_STRETCH_MIN_CHARS (longer ones are never split).
  base64Words: `${CORPUS.base64!.repeat(15)} `.repeat(40),
  contractionsAndMarks: "don't DON'T we'll I'M café e\u0301te\u0301 naïve l'été ".repeat(800),
};

/** Whether a split at `at` follows one of the two rules of chunks.ts. */
function isSafeSplit(text: string, at: number): boolean {
  const before = text[at - 1]!;
  const after = text[at]!;
  if (before === "\n") return !/[\s/]/.test(after);
  return /\p{L}/u.test(before) && !/[\p{L}\p{M}']/u.test(after);
}

describe("splitAtPieceBoundaries", () => {
  it.each(Object.keys(texts))("splits %s at safe places into chunks that join back to it", (name) => {
    const text = texts[name]!;
    const chunks = splitAtPieceBoundaries(text, 1000);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.join("")).toBe(text);
    let at = 0;
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.length).toBeGreaterThanOrEqual(1000);
      at += chunk.length;
      expect(isSafeSplit(text, at)).toBe(true);
    }
  });

  describe.each(["o200k_base", "cl100k_base"] as const)("in %s", (encoding) => {
    it.each(Object.keys(texts))("keeps the token count of %s", (name) => {
      const count = loadExactCount(encoding);
      const text = texts[name]!;
      const chunks = splitAtPieceBoundaries(text, 200);
      expect(chunks.length).toBeGreaterThan(20);
      expect(chunks.reduce((sum, chunk) => sum + count(chunk), 0)).toBe(count(text));
    });
  });

  it("keeps a long run of one character whole", () => {
    const run = "=".repeat(40_000);
    expect(splitAtPieceBoundaries(run, 1000)).toEqual([run]);
  });

  it("never splits inside a long whitespace-free stretch, and splits right after one", () => {
    const stretch = CORPUS.base64!.repeat(500);
    const text = `${stretch} and more words after it ${"word ".repeat(400)}`;
    const chunks = splitAtPieceBoundaries(text, 1000);
    // The first split after the stretch is the next letter boundary (after " and").
    expect(chunks[0]).toBe(`${stretch} and`);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join("")).toBe(text);
  });

  it("prefers a line start near the target to a letter boundary", () => {
    const text = "word ".repeat(30) + "\nnext line";
    expect(splitAtPieceBoundaries(text, 140)).toEqual(["word ".repeat(30) + "\n", "next line"]);
  });

  it("returns short texts as they are", () => {
    expect(splitAtPieceBoundaries("short\ntext", 1000)).toEqual(["short\ntext"]);
    expect(splitAtPieceBoundaries("", 1000)).toEqual([""]);
  });
});
