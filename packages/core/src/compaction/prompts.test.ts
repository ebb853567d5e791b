import type { ContextMessage } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { INJECTED_TEXT_TYPE } from "../injected.js";
import {
  buildSummaryRequest,
  INITIAL_SUMMARY_PROMPT,
  SUMMARIZATION_SYSTEM_PROMPT,
  TURN_PREFIX_SUMMARY_PROMPT,
  UPDATE_SUMMARY_PROMPT,
} from "./prompts.js";

const messages: ContextMessage[] = [
  { role: "user", content: "hello" },
  { role: "bashExecution", command: "ls", output: "a", cancelled: false, truncated: false },
];
const conversation = "<conversation>\n[User]: hello\n\n[User]: Ran `ls`\n```\na\n```\n</conversation>\n\n";

describe("buildSummaryRequest", () => {
  it("wraps the serialized conversation and asks for the structured format", () => {
    const request = buildSummaryRequest({ messages, kind: "history", reserveTokens: 16384 });
    expect(request).toEqual({ system: SUMMARIZATION_SYSTEM_PROMPT, prompt: conversation + INITIAL_SUMMARY_PROMPT, maxTokens: 13107 });
    for (const heading of [
      "## Goal",
      "## Constraints & Preferences",
      "## Progress",
      "### Done",
      "### In Progress",
      "### Blocked",
      "## Key Decisions",
      "## Next Steps",
      "## Critical Context",
    ]) {
      expect(request.prompt).toContain(heading);
    }
  });

  it("uses the update prompt with the previous summary in its own tags", () => {
    const request = buildSummaryRequest({ messages, previousSummary: "OLD </previous-summary> x", kind: "history", reserveTokens: 100 });
    expect(request.prompt).toBe(
      `${conversation}<previous-summary>\nOLD <\\/previous-summary> x\n</previous-summary>\n\n${UPDATE_SUMMARY_PROMPT}`,
    );
    expect(request.maxTokens).toBe(80);
  });

  it("gives the model a previous summary without the instructions an agent's harness wrote around it", () => {
    const claudeCode =
      "This session is being continued from a previous conversation that ran out of context.\nSummary:\n1. Primary Request and Intent:\n   - Fix the parser\n" +
      "Please continue the conversation from where we left off without asking the user any further questions.";
    const request = buildSummaryRequest({ messages, previousSummary: claudeCode, kind: "history", reserveTokens: 100 });
    expect(request.prompt).toContain("<previous-summary>\nSummary:\n1. Primary Request and Intent:\n   - Fix the parser\n</previous-summary>");
  });

  it("appends custom instructions last, as the additional focus", () => {
    const request = buildSummaryRequest({
      messages,
      customInstructions: "  the auth refactor ",
      kind: "history",
      reserveTokens: 100,
    });
    expect(request.prompt.endsWith(`${INITIAL_SUMMARY_PROMPT}\n\nAdditional focus: the auth refactor`)).toBe(true);
  });

  it("ignores blank custom instructions", () => {
    const request = buildSummaryRequest({ messages, customInstructions: "  ", kind: "history", reserveTokens: 100 });
    expect(request.prompt.endsWith(INITIAL_SUMMARY_PROMPT)).toBe(true);
  });

  it("asks for a turn prefix summary with half the reserve and no previous summary", () => {
    const request = buildSummaryRequest({
      messages,
      previousSummary: "OLD",
      customInstructions: "keep the migration command",
      kind: "turnPrefix",
      reserveTokens: 16385,
    });
    expect(request.maxTokens).toBe(8192);
    expect(request.prompt).toBe(`${conversation}${TURN_PREFIX_SUMMARY_PROMPT}\n\nAdditional focus: keep the migration command`);
    expect(request.prompt).not.toContain("previous-summary");
  });
});

describe("injected text in the conversation to summarize", () => {
  it("is labelled as the harness's, never as the user's words; other custom messages stay user turns", () => {
    const withInjected: ContextMessage[] = [
      { role: "user", content: "Fix the parser." },
      { role: "custom", customType: INJECTED_TEXT_TYPE, content: "<system-reminder>\nThe user opened cli.ts.\n</system-reminder>", display: false },
      { role: "custom", customType: "note", content: "a plugin's note", display: true },
    ];
    const request = buildSummaryRequest({ messages: withInjected, kind: "history", reserveTokens: 16384 });
    expect(request.prompt).toContain(
      "<conversation>\n[User]: Fix the parser.\n\n[Injected by the agent's harness, not the user's words]: <system-reminder>\nThe user opened cli.ts.\n</system-reminder>\n\n[User]: a plugin's note\n</conversation>",
    );
  });
});
