import { describe, expect, it } from "vitest";
import { usageStatus, type Usage } from "./usage-model.js";

const usage = (tokens: number, extra: Partial<Usage> = {}): Usage => ({
  tokens,
  usageTokens: null,
  trailingTokens: tokens,
  threshold: 183_616,
  shouldCompact: false,
  settings: { reserveTokens: 16_384, keepRecentTokens: 20_000 },
  ...extra,
});

describe("usageStatus", () => {
  it("shows the tokens against the window, short, with the share", () => {
    const status = usageStatus(usage(48_213), 200_000, "Fix the login bug");
    expect(status).toMatchObject({ text: "$(dashboard) 48.2k/200k · 24%", severity: "normal" });
    expect(status.tooltip).toContain("**Fix the login bug**");
    expect(status.tooltip).toContain("48,213 of 200,000 tokens (24%)");
    expect(status.tooltip).toContain("Compaction threshold: 183,616 tokens (the window less `compaction.reserveTokens`, 16,384 here).");
    expect(status.tooltip).not.toContain("Last usage the model reported");
  });

  it("says what the model last reported and what came after it", () => {
    const status = usageStatus(usage(10_500, { usageTokens: 10_000, trailingTokens: 500 }), 128_000, "s");
    expect(status.text).toBe("$(dashboard) 10.5k/128k · 8%");
    expect(status.tooltip).toContain("Last usage the model reported: 10,000, then 500 tokens after it.");
  });

  it("warns once the daemon says to compact, with its reason", () => {
    const status = usageStatus(usage(190_000, { shouldCompact: true, reason: "190000 tokens > threshold 183616" }), 200_000, "s");
    expect(status).toMatchObject({ text: "$(warning) 190k/200k · 95%", severity: "warning" });
    expect(status.tooltip).toContain("**Past the threshold: compact now** (190000 tokens > threshold 183616).");
  });

  it("is an error past the window, and says when compaction at a threshold is off", () => {
    expect(usageStatus(usage(250_000), 200_000, "s")).toMatchObject({ text: "$(error) 250k/200k · 125%", severity: "error" });
    const off = usageStatus(usage(1_000, { reason: "compaction.enabled is false" }), 200_000, "s");
    expect(off.severity).toBe("normal");
    expect(off.tooltip).toContain("The daemon notes: compaction.enabled is false.");
  });

  it("shows counts under a thousand as they are, and millions short", () => {
    expect(usageStatus(usage(950), 1_000_000, "s").text).toBe("$(dashboard) 950/1M · 0%");
    expect(usageStatus(usage(1_250_000), 2_000_000, "s").text).toBe("$(dashboard) 1.3M/2M · 63%");
  });
});
