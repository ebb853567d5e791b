import { describe, expect, it } from "vitest";
import { jsonBytes } from "./entry-size.js";

describe("jsonBytes", () => {
  it("is the UTF-8 length of JSON.stringify for values without escapes (within a byte per member)", () => {
    const values = [
      { type: "message", message: { role: "user", content: "héllo wörld 😀", timestamp: 1767225600000 } },
      { a: [1, 2, null, true, { b: "x" }], c: {}, d: [] },
      "plain",
      [],
    ];
    for (const value of values) {
      const exact = Buffer.byteLength(JSON.stringify(value), "utf8");
      expect(Math.abs(jsonBytes(value) - exact)).toBeLessThanOrEqual(3);
    }
  });

  it("stops walking once over the limit", () => {
    const big = { parts: Array.from({ length: 100_000 }, () => "x".repeat(100)) };
    expect(jsonBytes(big, 1000)).toBeGreaterThan(1000);
    expect(jsonBytes(big, 1000)).toBeLessThan(jsonBytes(big) / 10); // the strings were not all measured
  });
});
