import { describe, expect, it } from "vitest";
import { capSummary, summaryCutNote, utf8ByteLength } from "./summary-cap.js";

describe("capSummary", () => {
  it("keeps a summary that fits", () => {
    expect(capSummary("short", 1024)).toBe("short");
    const exact = "é".repeat(600); // 1,200 bytes
    expect(capSummary(exact, 1200)).toBe(exact);
  });

  it("cuts a longer summary to the limit, with a note, never splitting a character", () => {
    for (const unit of ["x", "é", "€", "😀"]) {
      const capped = capSummary(unit.repeat(5_000), 2_048);
      expect(utf8ByteLength(capped), unit).toBeLessThanOrEqual(2_048);
      expect(Buffer.byteLength(capped), unit).toBe(utf8ByteLength(capped));
      expect(capped.endsWith(summaryCutNote(2_048)), unit).toBe(true);
      const kept = capped.slice(0, -summaryCutNote(2_048).length);
      expect(kept, unit).toBe(unit.repeat(kept.length / unit.length));
      expect(utf8ByteLength(capped), unit).toBeGreaterThan(2_048 - 8);
    }
  });

  it("measures UTF-8 as Buffer does, lone surrogates included", () => {
    for (const text of ["", "abc", "é€😀", "\ud800x", "x\udc00", "😀".repeat(3)])
      expect(utf8ByteLength(text), JSON.stringify(text)).toBe(Buffer.byteLength(text));
  });
});
