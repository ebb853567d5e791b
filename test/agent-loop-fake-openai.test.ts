/**
 * The fake OpenAI server's scripted tool calls (added for the agent-loop test), read back through
 * the real `openai` SDK: plain and streamed, with generated or given ids, object or raw arguments.
 */
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reply, startFakeOpenAI, type FakeOpenAI } from "./support/fake-openai.js";

let fake: FakeOpenAI;
let client: OpenAI;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  client = new OpenAI({ baseURL: fake.baseURL, apiKey: "test-key", maxRetries: 0 });
});
afterEach(async () => {
  await fake.close();
});

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: "function", function: { name: "read", parameters: { type: "object", properties: { path: { type: "string" } } } } },
];

describe("fake OpenAI server: tool calls", () => {
  it("answers with tool calls the SDK parses, and records the tools offered", async () => {
    fake.enqueue(
      reply.toolCalls([{ name: "read", arguments: { path: "a.md" } }, { id: "call_given", name: "read", arguments: "{not json" }], { text: "Reading." }),
    );
    const completion = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "read a.md" }], tools });

    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Reading.");
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_fake_\d+$/), type: "function", function: { name: "read", arguments: '{"path":"a.md"}' } },
      { id: "call_given", type: "function", function: { name: "read", arguments: "{not json" } },
    ]);
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    expect(fake.chatRequests()[0]?.body?.tools?.[0]?.function?.name).toBe("read");
  });

  it("has no text content when only tools are called", async () => {
    fake.enqueue(reply.toolCalls([{ name: "read", arguments: {} }]));
    const completion = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }], tools });
    expect(completion.choices[0]?.message.content).toBeNull();
  });

  it("streams tool calls as deltas: id and name first, arguments in pieces", async () => {
    fake.setHandler(() => reply.toolCalls([{ id: "call_1", name: "read", arguments: { path: "a fairly long/path/to/a/file.md" } }, { id: "call_2", name: "ls", arguments: {} }]));
    const stream = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    const calls: { id?: string; name?: string; arguments: string }[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      usage = chunk.usage ?? usage;
      for (const choice of chunk.choices) {
        finish = choice.finish_reason ?? finish;
        for (const delta of choice.delta.tool_calls ?? []) {
          const call = (calls[delta.index] ??= { arguments: "" });
          if (delta.id) call.id = delta.id;
          if (delta.function?.name) call.name = delta.function.name;
          call.arguments += delta.function?.arguments ?? "";
        }
      }
    }
    expect(finish).toBe("tool_calls");
    expect(calls).toEqual([
      { id: "call_1", name: "read", arguments: '{"path":"a fairly long/path/to/a/file.md"}' },
      { id: "call_2", name: "ls", arguments: "{}" },
    ]);
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });
});
