import { describe, expect, it } from "vitest";
import { fitToWindow, WINDOW_SHARES, type WindowSizes } from "./window-fit.js";

const DEFAULTS: WindowSizes = {
  reserveTokens: 16_384,
  keepRecentTokens: 20_000,
  protectTokens: 40_000,
  minTokens: 1_000,
  minSavings: 20_000,
};
const NONE = new Set<keyof WindowSizes>();

describe("fitToWindow", () => {
  it("caps every size the user did not set at its share of the window", () => {
    expect(fitToWindow(8_000, DEFAULTS, NONE)).toEqual({
      reserveTokens: 2_000,
      keepRecentTokens: 2_000,
      protectTokens: 1_600,
      minTokens: 500,
      minSavings: 2_000,
      derived: ["reserveTokens", "keepRecentTokens", "protectTokens", "minSavings", "minTokens"],
    });
  });

  it("gives the kept part and the room a quarter of any window, above their defaults too; the other defaults stay in windows large enough for them", () => {
    expect(fitToWindow(200_000, DEFAULTS, NONE)).toEqual({
      ...DEFAULTS,
      keepRecentTokens: 50_000,
      minSavings: 50_000,
      derived: ["keepRecentTokens", "minSavings"],
    });
    expect(fitToWindow(1_000_000, DEFAULTS, NONE)).toMatchObject({ reserveTokens: 16_384, keepRecentTokens: 250_000, minSavings: 250_000 });
    // 128k: a quarter is more than the default reserve; the protected window is lowered.
    expect(fitToWindow(128_000, DEFAULTS, NONE)).toMatchObject({
      keepRecentTokens: 32_000,
      derived: ["keepRecentTokens", "protectTokens", "minSavings"],
    });
  });

  it("keeps the sizes the user set", () => {
    const fitted = fitToWindow(8_000, { ...DEFAULTS, keepRecentTokens: 3_000 }, new Set(["keepRecentTokens"]));
    expect(fitted).toMatchObject({ reserveTokens: 2_000, keepRecentTokens: 3_000 });
    expect(fitted.conflict).toBeUndefined();
  });

  it("reports a reserve and kept part that take the whole window, naming the one the user set, and changes neither", () => {
    const fitted = fitToWindow(8_000, DEFAULTS, new Set(["reserveTokens"]));
    expect(fitted).toMatchObject({ reserveTokens: 16_384, keepRecentTokens: 2_000 });
    expect(fitted.conflict).toBe(
      "the compaction settings cannot fit the model's window (8,000 tokens): compaction.reserveTokens 16,384 + " +
        "compaction.keepRecentTokens 2,000 = 18,384, so a compacted context is still over the threshold. Lower " +
        "compaction.reserveTokens (set by you), or leave it unset: it is then capped at a quarter of the window.",
    );
    const keptSet = fitToWindow(8_000, { ...DEFAULTS, keepRecentTokens: 6_000 }, new Set(["keepRecentTokens"]));
    expect(keptSet.conflict).toContain("Lower compaction.keepRecentTokens (set by you), or leave it unset: it is then a quarter of the window.");
    const halves = { ...DEFAULTS, reserveTokens: 5_000, keepRecentTokens: 5_000 };
    const both = fitToWindow(10_000, halves, new Set(["reserveTokens", "keepRecentTokens"]));
    expect(both.conflict).toContain("Lower them, or leave them unset: the reserve is then capped at a quarter of the window, the kept part a quarter of it.");
  });

  it.each([4_000, 4_096, 6_000, 8_000, 12_345, 32_000, 100_000, 200_000, 1_000_000])(
    "leaves room in a %i-token window for the kept part, the largest summary and a turn",
    (window) => {
      const fitted = fitToWindow(window, DEFAULTS, NONE);
      expect(fitted.conflict).toBeUndefined();
      // After a compaction: kept part + summary (at most 0.8 × reserve) within 0.45 of the window, under a
      // threshold of at least 0.75 of it: 0.3 of the window is left for the turns before the next one.
      const afterCompaction = fitted.keepRecentTokens + 0.8 * fitted.reserveTokens;
      expect(afterCompaction).toBeLessThanOrEqual(0.45 * window);
      expect(window - fitted.reserveTokens).toBeGreaterThanOrEqual(0.75 * window);
      // The kept part is a quarter of the window: the least a compaction leaves.
      expect(fitted.keepRecentTokens).toBe(Math.floor(window * WINDOW_SHARES.keepRecentTokens));
      // A compaction leaves the context a quarter of the window under the threshold, and still over the kept part.
      expect(fitted.minSavings).toBe(Math.floor(window / 4));
      expect(window - fitted.reserveTokens - fitted.minSavings).toBeGreaterThanOrEqual(fitted.keepRecentTokens);
    },
  );
});
