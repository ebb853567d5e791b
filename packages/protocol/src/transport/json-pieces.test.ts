import { describe, expect, it } from "vitest";
import { jsonPieces, PIECE_CHARS } from "./json-pieces.js";

const joined = (value: unknown) => jsonPieces(value).join("");
const longest = (value: unknown) => Math.max(...jsonPieces(value).map((piece) => piece.length));

describe("jsonPieces", () => {
  it("gives a small value as the one JSON.stringify text", () => {
    const value = { jsonrpc: "2.0", id: 1, result: { entry: { id: "a1", content: "hello" } } };
    expect(jsonPieces(value)).toEqual([JSON.stringify(value)]);
  });

  it("splits a large reply into small pieces whose concatenation is JSON.stringify's text", () => {
    const messages = Array.from({ length: 300 }, (_, index) => ({
      role: index % 2 ? "assistant" : "user",
      content: [{ type: "text", text: `message ${index} ${"lorem ipsum ".repeat(200)}` }],
      usage: index % 2 ? { input: 10, output: 20 } : undefined,
    }));
    const value = { jsonrpc: "2.0", id: 7, result: { messages, tokens: 123_456, model: null } };
    expect(joined(value)).toBe(JSON.stringify(value));
    expect(jsonPieces(value).length).toBeGreaterThan(300);
    expect(longest(value)).toBeLessThanOrEqual(PIECE_CHARS + 2);
  });

  it("cuts a long string into quoted slices without splitting a surrogate pair or an escape", () => {
    // The pair straddles every slice boundary: "a" shifts it by one.
    const text = `a${"😀".repeat(PIECE_CHARS)}\n"quoted" \\ \u0001 ${"é".repeat(PIECE_CHARS)}`;
    const value = { text, list: [text, 1] };
    expect(joined(value)).toBe(JSON.stringify(value));
    expect(longest(value)).toBeLessThanOrEqual(PIECE_CHARS * 6 + 2);
    expect(joined(text)).toBe(JSON.stringify(text));
  });

  it("keeps JSON.stringify's rules for undefined, functions, symbols, toJSON and null prototypes", () => {
    const big = "x".repeat(PIECE_CHARS);
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { big, n: 1 });
    const value = {
      big,
      skipped: undefined,
      fn: () => 1,
      sym: Symbol("s"),
      list: [undefined, () => 1, Symbol("t"), big, null, Number.NaN, -0],
      date: new Date(0),
      custom: { toJSON: () => ({ replaced: big }) },
      boxed: new String("boxed"),
      bare,
      nested: { a: { b: { c: { d: { e: { f: { g: { h: { i: { big } } } } } } } } } },
    };
    expect(joined(value)).toBe(JSON.stringify(value));
  });

  it("fails as JSON.stringify does on what has no JSON form", () => {
    const cycle: Record<string, unknown> = { big: "y".repeat(PIECE_CHARS) };
    cycle.self = cycle;
    expect(() => jsonPieces(cycle)).toThrow(TypeError);
    expect(() => jsonPieces({ big: "z".repeat(PIECE_CHARS), n: 1n })).toThrow(TypeError);
  });
});
