import { describe, expect, it } from "vitest";
import { PathBuilder, toolCall } from "../../../core/src/test-support.js";
import { RequestFailedError } from "../errors.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../summarizer/index.js";
import { branchReserveSet, branchTokenBudget, NO_SUMMARIZER, summarizeBranch } from "./branch-summary.js";

/** A model summarizer that always fails, as a provider outage would. */
const failing: Summarizer = {
  id: "openai:down",
  summarize(_request: SummaryRequest): Promise<SummaryResult> {
    return Promise.reject(new RequestFailedError("HTTP 503: overloaded"));
  },
};

function branch() {
  const s = new PathBuilder();
  s.user("try redis", 10);
  s.assistant({ text: "redis works", toolCalls: [toolCall("c1", "write", { path: "src/cache.ts" })] }, 10);
  return s.path;
}

describe("summarizeBranch", () => {
  it("records the failed model and the extractive stand-in in details, as compaction entries do", async () => {
    const written = await summarizeBranch({ entries: branch(), tokenBudget: 0, summarizer: failing, fallback: true });
    expect(written.details).toEqual({
      readFiles: [],
      modifiedFiles: ["src/cache.ts"],
      summarizer: "extractive",
      fallback: { from: "openai:down", error: "HTTP 503: overloaded" },
      fallbacks: [{ from: "openai:down", error: "HTTP 503: overloaded" }],
    });
    expect(written.summary).toContain("<modified-files>\nsrc/cache.ts\n</modified-files>");
  });

  it("lets the model failure through with fallback off", async () => {
    await expect(summarizeBranch({ entries: branch(), tokenBudget: 0, summarizer: failing, fallback: false })).rejects.toBeInstanceOf(
      RequestFailedError,
    );
  });

  it("asks no summarizer for a branch without messages, and says so in details", async () => {
    const written = await summarizeBranch({ entries: [], tokenBudget: 0, summarizer: failing, fallback: false });
    expect(written.details).toEqual({ readFiles: [], modifiedFiles: [], summarizer: NO_SUMMARIZER });
  });
});

describe("branchTokenBudget", () => {
  it("caps a reserve the user did not set at a quarter of the window, and keeps one they set", () => {
    expect(branchTokenBudget(128_000, 16_384, false)).toBe(128_000 - 16_384);
    expect(branchTokenBudget(8_000, 16_384, false)).toBe(6_000);
    // Set by the user and larger than the window: no limit (0), as pi does.
    expect(branchTokenBudget(8_000, 16_384, true)).toBe(0);
    expect(branchReserveSet({ "branchSummary.reserveTokens": "default" })).toBe(false);
    expect(branchReserveSet({ "branchSummary.reserveTokens": "project" })).toBe(true);
    expect(branchReserveSet(undefined)).toBe(true);
  });
});
