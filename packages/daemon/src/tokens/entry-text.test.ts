import type { SessionEntry } from "@base-context/protocol";
import { SessionEntry as SessionEntrySchema } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import {
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  chars4Tokens,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  entryContextText,
} from "./entry-text.js";

const base = { id: "e1", parentId: null, timestamp: "2026-03-01T12:00:00.000Z" };
/** Entries go through the protocol schema, as the daemon stores them (defaults applied). */
const entry = (body: Record<string, unknown>): SessionEntry => SessionEntrySchema.parse({ ...base, ...body });
const message = (body: Record<string, unknown>) => entry({ type: "message", message: body });
const image = { type: "image", data: "aGVsbG8=", mimeType: "image/png" };

describe("entryContextText", () => {
  it("takes a user message's string content", () => {
    expect(entryContextText(message({ role: "user", content: "hello" }))).toEqual({ text: "hello", images: 0 });
  });

  it("concatenates a user message's text blocks and counts its images", () => {
    const user = message({ role: "user", content: [{ type: "text", text: "ab" }, image, { type: "text", text: "cd" }, image] });
    expect(entryContextText(user)).toEqual({ text: "abcd", images: 2 });
  });

  it("takes an assistant's text, thinking, and tool calls as name + JSON arguments", () => {
    const assistant = message({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm" },
        { type: "text", text: "Reading." },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts", limit: 10 } },
      ],
    });
    expect(entryContextText(assistant).text).toBe('hmmReading.read{"path":"a.ts","limit":10}');
  });

  it("takes tool results' and custom messages' text blocks and images", () => {
    const toolResult = message({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "read",
      content: [{ type: "text", text: "file" }, image],
    });
    expect(entryContextText(toolResult)).toEqual({ text: "file", images: 1 });
    const custom = message({ role: "custom", customType: "note", content: "remember" });
    expect(entryContextText(custom)).toEqual({ text: "remember", images: 0 });
    const customMessage = entry({ type: "custom_message", customType: "note", content: [{ type: "text", text: "x" }, image] });
    expect(entryContextText(customMessage)).toEqual({ text: "x", images: 1 });
  });

  describe("bash executions, as pi sends them to the LLM", () => {
    const bash = (fields: Record<string, unknown>) => message({ role: "bashExecution", command: "ls", output: "a\nb", ...fields });

    it("puts the output in a fenced block", () => {
      expect(entryContextText(bash({ exitCode: 0 })).text).toBe("Ran `ls`\n```\na\nb\n```");
    });

    it("says when there was no output, and the exit code when it was not 0", () => {
      expect(entryContextText(bash({ output: "", exitCode: 2 })).text).toBe("Ran `ls`\n(no output)\n\nCommand exited with code 2");
    });

    it("says when the command was cancelled or the output truncated", () => {
      expect(entryContextText(bash({ cancelled: true, truncated: true, fullOutputPath: "out.log" })).text).toBe(
        "Ran `ls`\n```\na\nb\n```\n\n(command cancelled)\n\n[Output truncated. Full output: out.log]",
      );
    });

    it("is empty when excluded from the context", () => {
      expect(entryContextText(bash({ excludeFromContext: true }))).toEqual({ text: "", images: 0 });
    });
  });

  it("wraps compaction and branch summaries as the context builder does", () => {
    const compaction = entry({ type: "compaction", summary: "S", firstKeptEntryId: "e0", tokensBefore: 10 });
    expect(entryContextText(compaction).text).toBe(COMPACTION_SUMMARY_PREFIX + "S" + COMPACTION_SUMMARY_SUFFIX);
    expect(COMPACTION_SUMMARY_PREFIX).toBe(
      "The conversation history before this point was compacted into the following summary:\n\n<summary>\n",
    );
    const branch = entry({ type: "branch_summary", summary: "B", fromId: "e0" });
    expect(entryContextText(branch).text).toBe(BRANCH_SUMMARY_PREFIX + "B" + BRANCH_SUMMARY_SUFFIX);
    expect(BRANCH_SUMMARY_PREFIX).toBe(
      "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n",
    );
  });

  it.each([
    { type: "custom", customType: "state", data: { big: "x".repeat(100) } },
    { type: "label", targetId: "e0", label: "here" },
    { type: "model_change", provider: "openai", modelId: "gpt-5" },
    { type: "thinking_level_change", thinkingLevel: "high" },
    { type: "session_info", name: "my session" },
  ])("is empty for a $type entry", (body) => {
    expect(entryContextText(entry(body))).toEqual({ text: "", images: 0 });
  });
});

describe("chars4Tokens", () => {
  it("is ceil(chars / 4), with each image as 1,200 tokens", () => {
    expect(chars4Tokens({ text: "", images: 0 })).toBe(0);
    expect(chars4Tokens({ text: "abcde", images: 0 })).toBe(2);
    expect(chars4Tokens({ text: "abcd", images: 2 })).toBe(1 + 2400);
  });

  it("counts UTF-16 code units, like pi's string lengths", () => {
    expect(chars4Tokens({ text: "😀😀😀", images: 0 })).toBe(2); // 6 code units
  });
});
