import { afterEach, beforeEach, describe, expect, it } from "vitest";
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from "openai";
import { reply, startFakeOpenAI, type FakeOpenAI } from "./fake-openai.js";

let fake: FakeOpenAI;
let client: OpenAI;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  client = new OpenAI({ baseURL: fake.baseURL, apiKey: "test-key", maxRetries: 0 });
});

afterEach(async () => {
  await fake.close();
});

const ask = (content: string, extra: Partial<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming> = {}, signal?: AbortSignal) =>
  client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content }], ...extra }, { signal });

describe("fake OpenAI server", () => {
  it("answers with a structured summary that echoes the conversation, and records the request", async () => {
    const completion = await ask("<conversation>\n[User]: refactor the auth module\n</conversation>", { max_tokens: 100 });

    const text = completion.choices[0]?.message.content ?? "";
    expect(text).toContain("## Goal");
    expect(text).toContain("refactor the auth module");
    expect(text).toContain("## Critical Context");
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(1);
    const recorded = fake.requests[0]!;
    expect(recorded.method).toBe("POST");
    expect(recorded.path).toBe("/v1/chat/completions");
    expect(recorded.headers.authorization).toBe("Bearer test-key");
    expect(recorded.body?.model).toBe("fake-model");
    expect(recorded.body?.max_tokens).toBe(100);
  });

  it("replies with scripted text and usage", async () => {
    fake.setHandler(() => reply.text("hello", { usage: { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 } }));
    const completion = await ask("hi");
    expect(completion.choices[0]?.message.content).toBe("hello");
    expect(completion.usage).toEqual({ prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 });
  });

  it("plays queued replies in order before falling back to the handler", async () => {
    fake.enqueue(reply.rateLimited({ retryAfterMs: 5 }), reply.text("second"));
    await expect(ask("1")).rejects.toMatchObject({ status: 429 });
    expect((await ask("2")).choices[0]?.message.content).toBe("second");
    expect((await ask("3")).choices[0]?.message.content).toContain("## Goal");
  });

  it("sends OpenAI-style error bodies and headers the SDK understands", async () => {
    fake.enqueue(reply.badRequest("Invalid model: nope", "model_not_found"), reply.rateLimited({ retryAfterSeconds: 3 }));

    const badRequest = await ask("x").catch((error: unknown) => error);
    expect(badRequest).toBeInstanceOf(APIError);
    expect(badRequest).toMatchObject({ status: 400, code: "model_not_found", type: "invalid_request_error" });
    expect((badRequest as APIError).message).toContain("Invalid model: nope");

    const limited = await ask("y").catch((error: unknown) => error);
    expect((limited as APIError).status).toBe(429);
    expect((limited as APIError).headers?.get("retry-after")).toBe("3");
  });

  it("lets the SDK's own retry go through a 500 and then succeed", async () => {
    fake.enqueue(reply.serverError(), reply.text("recovered"));
    const retrying = new OpenAI({ baseURL: fake.baseURL, apiKey: "k", maxRetries: 1 });
    const completion = await retrying.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
    expect(completion.choices[0]?.message.content).toBe("recovered");
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it("streams when asked to, with usage in the last chunk", async () => {
    fake.setHandler(() => reply.text("a streamed answer that spans several chunks"));
    const stream = await client.chat.completions.create({
      model: "fake-model",
      messages: [{ role: "user", content: "x" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let totalTokens = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      totalTokens = chunk.usage?.total_tokens ?? totalTokens;
    }
    expect(text).toBe("a streamed answer that spans several chunks");
    expect(totalTokens).toBeGreaterThan(0);
  });

  it("abandons a pending reply when the client aborts, without hanging", async () => {
    // The reply never comes: a call that settles, and a request seen disconnected, did not hang.
    fake.setHandler(() => reply.hang());
    const controller = new AbortController();
    const call = ask("slow", {}, controller.signal).catch((error: unknown) => error);
    await until(() => fake.requests.length === 1);
    controller.abort();

    expect(await call).toBeInstanceOf(APIUserAbortError);
    await until(() => fake.requests[0]!.disconnected);
  });

  it("abandons a delayed reply when the client aborts", async () => {
    fake.setHandler(() => reply.delayed(60_000, reply.text("too late")));
    const controller = new AbortController();
    const call = ask("slow", {}, controller.signal).catch((error: unknown) => error);
    await until(() => fake.requests.length === 1);
    controller.abort();
    expect(await call).toBeInstanceOf(APIUserAbortError);
    await until(() => fake.requests[0]!.disconnected);
  });

  it("delays a reply by the scripted time", async () => {
    fake.setHandler(() => reply.delayed(150, reply.text("late")));
    const started = Date.now();
    const completion = await ask("x");
    expect(completion.choices[0]?.message.content).toBe("late");
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("drops the connection when told to (a network error for the client)", async () => {
    fake.setHandler(() => reply.disconnect());
    await expect(ask("x")).rejects.toBeInstanceOf(APIConnectionError);
  });

  it("answers unknown routes with a 404 error body", async () => {
    const response = await fetch(`${fake.baseURL}/embeddings`, { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "unknown_url" } });
  });
});

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: "function", function: { name: "read", parameters: { type: "object", properties: { path: { type: "string" } } } } },
];

describe("fake OpenAI server: tool calls", () => {
  it("answers with tool calls the SDK parses, and records the tools offered", async () => {
    fake.enqueue(
      reply.toolCalls(
        [
          { name: "read", arguments: { path: "a.md" } },
          { id: "call_given", name: "read", arguments: "{not json" },
        ],
        { text: "Reading." },
      ),
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
    fake.setHandler(() =>
      reply.toolCalls([
        { id: "call_1", name: "read", arguments: { path: "a fairly long/path/to/a/file.md" } },
        { id: "call_2", name: "ls", arguments: {} },
      ]),
    );
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

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
