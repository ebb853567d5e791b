import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "./defaults.js";
import { mergeSettings } from "./merge.js";

describe("mergeSettings", () => {
  it("gives the documented defaults, every key from 'default'", () => {
    const { settings, sources } = mergeSettings([]);
    expect(settings).toEqual({
      compaction: {
        enabled: true,
        reserveTokens: 16384,
        keepRecentTokens: 20000,
        prune: { enabled: true, protectTokens: 40000, minTokens: 1000, minSavings: 20000 },
      },
      branchSummary: { reserveTokens: 16384 },
      context: { mode: "on" },
      tokens: { encoding: "o200k_base", estimator: "exact" },
      summarizer: { provider: "auto", apiKeyEnv: "OPENAI_API_KEY", fallback: true, timeoutMs: 120000, maxRetries: 3 },
      summary: { repair: true },
      plugins: { hookTimeoutMs: 30000, enabled: true, order: [], maxMessageBytes: 8 * 1024 * 1024, isolation: "worker" },
      limits: {
        maxMessageBytes: 64 * 1024 * 1024,
        maxEntryBytes: 16 * 1024 * 1024,
        maxSummaryBytes: 1024 * 1024,
        maxImportLineBytes: 64 * 2 ** 20,
        maxImportFileBytes: 4 * 2 ** 30,
        maxQueuedOutputBytes: 64 * 1024 * 1024,
      },
      store: {},
    });
    expect(Object.values(sources).every((s) => s === "default")).toBe(true);
    expect(Object.keys(sources)).toContain("store.url");
    expect(Object.keys(sources)).toContain("summarizer.baseURL");
    expect(Object.keys(sources)).toContain("summarizer.model");
    expect(Object.keys(sources)).toContain("summary.repair");
    expect(Object.keys(sources)).toHaveLength(31);
  });

  it("merges one level deep: the project wins per nested key, other keys keep their value", () => {
    const { settings, sources } = mergeSettings([
      { source: "global", values: { compaction: { enabled: false, reserveTokens: 8000 }, summarizer: { model: "gpt-4.1-mini" } } },
      { source: "project", values: { compaction: { reserveTokens: 4000 }, plugins: { order: ["b", "a"] } } },
    ]);
    expect(settings.compaction).toEqual({
      enabled: false,
      reserveTokens: 4000,
      keepRecentTokens: 20000,
      prune: { enabled: true, protectTokens: 40000, minTokens: 1000, minSavings: 20000 },
    });
    expect(settings.summarizer.model).toBe("gpt-4.1-mini");
    expect(settings.plugins.order).toEqual(["b", "a"]);
    expect(sources).toMatchObject({
      "compaction.enabled": "global",
      "compaction.reserveTokens": "project",
      "compaction.keepRecentTokens": "default",
      "summarizer.model": "global",
      "summarizer.baseURL": "default",
      "plugins.order": "project",
    });
  });

  it("merges the nested compaction.prune group key by key, each key with its own source", () => {
    const { settings, sources } = mergeSettings([
      { source: "global", values: { compaction: { prune: { enabled: false, minTokens: 500 } } } },
      { source: "project", values: { compaction: { prune: { minTokens: 2000 } } } },
    ]);
    expect(settings.compaction.prune).toEqual({ enabled: false, protectTokens: 40000, minTokens: 2000, minSavings: 20000 });
    expect(sources).toMatchObject({
      "compaction.prune.enabled": "global",
      "compaction.prune.minTokens": "project",
      "compaction.prune.protectTokens": "default",
    });
    expect(DEFAULT_SETTINGS.compaction.prune.minTokens).toBe(1000);
  });

  it("skips layers without values (missing or ignored files) and never shares the defaults", () => {
    const { settings } = mergeSettings([{ source: "global", values: undefined }]);
    settings.plugins.order.push("mutated");
    expect(DEFAULT_SETTINGS.plugins.order).toEqual([]);
    expect(mergeSettings([]).settings.plugins.order).toEqual([]);
  });
});
