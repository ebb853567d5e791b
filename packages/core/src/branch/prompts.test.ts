import { describe, expect, it } from "vitest";
import { SUMMARIZATION_SYSTEM_PROMPT } from "../compaction/prompts.js";
import { assembleBranchSummary, BRANCH_SUMMARY_PROMPT, buildBranchSummaryRequest } from "./prompts.js";

const messages = [{ role: "user" as const, content: "try redis" }];
const conversation = "<conversation>\n[User]: try redis\n</conversation>\n\n";

describe("buildBranchSummaryRequest", () => {
  it("asks for the branch format with 2048 tokens", () => {
    const request = buildBranchSummaryRequest({ messages });
    expect(request).toEqual({ system: SUMMARIZATION_SYSTEM_PROMPT, prompt: conversation + BRANCH_SUMMARY_PROMPT, maxTokens: 2048 });
    for (const heading of ["## Goal", "## Constraints & Preferences", "## Progress", "## Key Decisions", "## Next Steps"]) {
      expect(request.prompt).toContain(heading);
    }
    expect(request.prompt).not.toContain("## Critical Context");
  });

  it("adds custom instructions as the additional focus", () => {
    expect(buildBranchSummaryRequest({ messages, customInstructions: "the cache" }).prompt).toBe(
      `${conversation}${BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: the cache`,
    );
  });

  it("uses the custom instructions alone with replaceInstructions", () => {
    expect(buildBranchSummaryRequest({ messages, customInstructions: "List the bugs.", replaceInstructions: true }).prompt).toBe(
      `${conversation}List the bugs.`,
    );
  });

  it("keeps the default prompt when replaceInstructions comes without instructions", () => {
    expect(buildBranchSummaryRequest({ messages, replaceInstructions: true }).prompt).toBe(conversation + BRANCH_SUMMARY_PROMPT);
  });
});

describe("assembleBranchSummary", () => {
  it("puts the preamble before the model text and the file lists after it", () => {
    expect(assembleBranchSummary("## Goal\nX", { readFiles: ["a.ts"], modifiedFiles: ["b.ts"] })).toEqual({
      summary:
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\nX\n\n<read-files>\na.ts\n</read-files>\n\n<modified-files>\nb.ts\n</modified-files>",
      details: { readFiles: ["a.ts"], modifiedFiles: ["b.ts"] },
    });
  });
});
