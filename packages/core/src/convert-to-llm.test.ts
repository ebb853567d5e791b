import type { BashExecutionMessage, ContextMessage } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { convertToLlm, toLlmMessages } from "./convert-to-llm.js";

function bash(spec: Partial<BashExecutionMessage>): BashExecutionMessage {
  return { role: "bashExecution", command: "make", output: "", cancelled: false, truncated: false, ...spec };
}

function onlyText(messages: ContextMessage[]): string {
  const [message] = convertToLlm(messages);
  if (message?.role !== "user" || typeof message.content === "string") throw new Error("expected a user message with blocks");
  const [block] = message.content;
  if (block?.type !== "text") throw new Error("expected a text block");
  return block.text;
}

describe("convertToLlm", () => {
  it("passes user, assistant and tool results through unchanged", () => {
    const messages: ContextMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: [{ type: "text", text: "a" }] },
      { role: "toolResult", toolCallId: "c", toolName: "read", content: [{ type: "text", text: "r" }], isError: false },
    ];
    expect(convertToLlm(messages)).toEqual(messages);
    expect(toLlmMessages).toBe(convertToLlm);
  });

  it("turns a bash run with output into a fenced user message", () => {
    expect(onlyText([bash({ output: "ok", exitCode: 0 })])).toBe("Ran `make`\n```\nok\n```");
  });

  it("says (no output) when a bash run printed nothing", () => {
    expect(onlyText([bash({})])).toBe("Ran `make`\n(no output)");
  });

  it("reports a non-zero exit code and a truncated output's full path", () => {
    expect(onlyText([bash({ output: "err", exitCode: 2, truncated: true, fullOutputPath: "/tmp/out.log" })])).toBe(
      "Ran `make`\n```\nerr\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/out.log]",
    );
  });

  it("reports a cancelled command instead of its exit code", () => {
    expect(onlyText([bash({ output: "x", cancelled: true, exitCode: 130 })])).toBe(
      "Ran `make`\n```\nx\n```\n\n(command cancelled)",
    );
  });

  it("drops bash runs excluded from the context", () => {
    expect(convertToLlm([bash({ excludeFromContext: true })])).toEqual([]);
  });

  it("turns custom messages into user messages with the same content", () => {
    const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };
    const converted = convertToLlm([
      { role: "custom", customType: "t", content: "note", display: true, timestamp: 5 },
      { role: "custom", customType: "t", content: [{ type: "text", text: "see" }, image], display: false },
    ]);
    expect(converted).toEqual([
      { role: "user", content: [{ type: "text", text: "note" }], timestamp: 5 },
      { role: "user", content: [{ type: "text", text: "see" }, image] },
    ]);
  });

  it("wraps a compaction summary with the exact prefix", () => {
    expect(onlyText([{ role: "compactionSummary", summary: "S", tokensBefore: 1 }])).toBe(
      "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>",
    );
  });

  it("wraps a branch summary with the exact prefix", () => {
    expect(onlyText([{ role: "branchSummary", summary: "B", fromId: "x" }])).toBe(
      "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nB</summary>",
    );
  });

  it("escapes a closing summary tag inside a summary so it cannot end the wrapper", () => {
    const text = onlyText([{ role: "compactionSummary", summary: "quoted </summary> here", tokensBefore: null }]);
    expect(text).toContain("quoted <\\/summary> here");
    expect(text.match(/<\/summary>/g)).toHaveLength(1);
  });
});
