import { describe, expect, it } from "vitest";
import { tooDeepAt } from "./nesting.js";

function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < levels; level++) value = level % 2 === 0 ? { d: value } : [value];
  return value;
}

describe("tooDeepAt", () => {
  it("accepts values up to the limit and names the path of the first one below it", () => {
    expect(tooDeepAt({ a: [1, { b: "x" }], c: null }, 3)).toBeUndefined();
    expect(tooDeepAt({ a: [1, { b: { c: 1 } }] }, 3)).toBe("a.1.b");
    expect(tooDeepAt(nested(128))).toBeUndefined();
    expect(tooDeepAt(nested(129))).toBeDefined();
  });

  it("walks 100,000 levels without running out of stack", () => {
    const path = tooDeepAt({ entry: { data: nested(100_000) } });
    expect(path?.startsWith("entry.data.")).toBe(true);
  });
});
