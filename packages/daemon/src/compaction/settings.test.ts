import { describe, expect, it } from "vitest";
import { defaultSettings } from "../settings/defaults.js";
import { effectiveCompactionSettings } from "./settings.js";

describe("effectiveCompactionSettings", () => {
  it("copies only the declared keys, so compaction.prune never reaches a preparation", () => {
    const settings = defaultSettings();
    expect(Object.keys(settings.compaction)).toContain("prune");
    const merged = effectiveCompactionSettings(settings, { keepRecentTokens: 5 });
    expect(Object.keys(merged).sort()).toEqual(["enabled", "keepRecentTokens", "reserveTokens"]);
    expect(merged.keepRecentTokens).toBe(5);
    expect(merged.reserveTokens).toBe(settings.compaction.reserveTokens);
  });
});
