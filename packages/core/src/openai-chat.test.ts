import type { ContextMessage } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { toOpenAIChat } from "./openai-chat.js";
import { toolCall } from "./test-support.js";

const png = { type: "image" as const, data: "QUJD", mimeType: "image/png" };

describe("toOpenAIChat", () => {
  it("converts a tool-using exchange", () => {
    const messages: ContextMessage[] = [
      { role: "user", content: "read a.ts" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "let me look" },
          { type: "text", text: "Reading." },
          toolCall("c1", "read", { path: "a.ts" }),
          toolCall("c2", "read", { path: "b.ts", limit: 3 }),
        ],
        stopReason: "toolUse",
      },
      { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "A" }], isError: false },
      { role: "toolResult", toolCallId: "c2", toolName: "read", content: [{ type: "text", text: "B" }], isError: true },
      { role: "assistant", content: [{ type: "text", text: "Done." }], stopReason: "stop" },
    ];
    expect(toOpenAIChat(messages)).toEqual([
      { role: "user", content: "read a.ts" },
      {
        role: "assistant",
        content: "Reading.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a.ts"}' } },
          { id: "c2", type: "function", function: { name: "read", arguments: '{"path":"b.ts","limit":3}' } },
        ],
      },
      { role: "tool", content: "A", tool_call_id: "c1" },
      { role: "tool", content: "B", tool_call_id: "c2" },
      { role: "assistant", content: "Done." },
    ]);
  });

  it("sends an assistant with only tool calls with null content", () => {
    const out = toOpenAIChat([
      { role: "assistant", content: [toolCall("c1", "bash", { command: "ls" })] },
      { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "x" }], isError: false },
    ]);
    expect(out[0]).toMatchObject({ role: "assistant", content: null });
  });

  it("puts user images in content parts as data URLs", () => {
    expect(toOpenAIChat([{ role: "user", content: [{ type: "text", text: "look" }, png] }])).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,QUJD" } },
        ],
      },
    ]);
  });

  it("sends tool result images in a user message after the run of tool results", () => {
    const out = toOpenAIChat([
      { role: "assistant", content: [toolCall("c1", "screenshot", {}), toolCall("c2", "bash", {})] },
      { role: "toolResult", toolCallId: "c1", toolName: "screenshot", content: [png], isError: false },
      { role: "toolResult", toolCallId: "c2", toolName: "bash", content: [{ type: "text", text: "ok" }], isError: false },
      { role: "user", content: "thanks" },
    ]);
    expect(out.slice(1)).toEqual([
      { role: "tool", content: "(see attached image)", tool_call_id: "c1" },
      { role: "tool", content: "ok", tool_call_id: "c2" },
      {
        role: "user",
        content: [
          { type: "text", text: "Attached image(s) from tool result:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,QUJD" } },
        ],
      },
      { role: "user", content: "thanks" },
    ]);
  });

  it("omits failed and aborted assistant replies, and thinking-only replies", () => {
    const out = toOpenAIChat([
      { role: "user", content: "go" },
      { role: "assistant", content: [], stopReason: "error", errorMessage: "overloaded" },
      { role: "assistant", content: [{ type: "text", text: "partial" }], stopReason: "aborted" },
      { role: "assistant", content: [{ type: "thinking", thinking: "hmm" }], stopReason: "stop" },
      { role: "user", content: "again" },
    ]);
    expect(out).toEqual([
      { role: "user", content: "go" },
      { role: "user", content: "again" },
    ]);
  });

  it("drops tool results whose call was in a dropped reply", () => {
    const out = toOpenAIChat([
      { role: "assistant", content: [toolCall("c1", "bash", {})], stopReason: "aborted" },
      { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "x" }], isError: true },
      { role: "user", content: "next" },
    ]);
    expect(out).toEqual([{ role: "user", content: "next" }]);
  });

  it("answers a tool call left without a result once the conversation moves on", () => {
    const out = toOpenAIChat([
      { role: "assistant", content: [toolCall("c1", "bash", {}), toolCall("c2", "bash", {})] },
      { role: "toolResult", toolCallId: "c2", toolName: "bash", content: [{ type: "text", text: "two" }], isError: false },
      { role: "user", content: "stop" },
    ]);
    expect(out.slice(1)).toEqual([
      { role: "tool", content: "two", tool_call_id: "c2" },
      { role: "tool", content: "No result provided", tool_call_id: "c1" },
      { role: "user", content: "stop" },
    ]);
  });

  it("leaves a trailing unanswered call alone: the client may be running it", () => {
    const out = toOpenAIChat([{ role: "assistant", content: [toolCall("c1", "bash", {})] }]);
    expect(out).toHaveLength(1);
  });

  it("converts summaries, custom messages and bash runs to user messages", () => {
    const out = toOpenAIChat([
      { role: "compactionSummary", summary: "S", tokensBefore: 3 },
      { role: "custom", customType: "n", content: "note", display: true },
      { role: "bashExecution", command: "ls", output: "", cancelled: false, truncated: false },
    ]);
    expect(out.map((m) => m.role)).toEqual(["user", "user", "user"]);
    expect(out[0]!.content).toContain("<summary>\nS\n</summary>");
    expect(out[1]!.content).toBe("note");
    expect(out[2]!.content).toBe("Ran `ls`\n(no output)");
  });
});
