import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../../../../test/support/fake-openai.js";
import { CancelledError, RequestFailedError } from "../errors.js";
import { addLogSink } from "../log.js";
import { OpenAISummarizer, type OpenAISummarizerOptions } from "./openai.js";
import type { SummaryRequest } from "./types.js";

let fake: FakeOpenAI;

beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

const FAST_BACKOFF = { baseDelayMs: 5, maxDelayMs: 20 };

function summarizer(overrides: Partial<OpenAISummarizerOptions> = {}): OpenAISummarizer {
  return new OpenAISummarizer({
    model: "gpt-4o-mini",
    baseURL: fake.baseURL,
    apiKeyEnv: "TEST_SUMMARY_KEY",
    env: { TEST_SUMMARY_KEY: "sk-test-123" },
    timeoutMs: 10_000,
    maxRetries: 3,
    backoff: FAST_BACKOFF,
    ...overrides,
  });
}

function request(overrides: Partial<SummaryRequest> = {}): SummaryRequest {
  return {
    kind: "history",
    messages: [{ role: "user", content: "refactor the auth module" }],
    system: "You are a context summarization assistant.",
    prompt: "<conversation>\n[User]: refactor the auth module\n</conversation>\n\nSummarize.",
    maxTokens: 13107,
    ...overrides,
  };
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("OpenAISummarizer", () => {
  it("sends exactly the system prompt, the user prompt, the model and max_tokens, with the key from the named variable", async () => {
    const result = await summarizer().summarize(request());

    expect(result.summarizer).toBe("openai:gpt-4o-mini");
    expect(result.text).toContain("Fake summary of: refactor the auth module");
    expect(result.usage?.totalTokens).toBeGreaterThan(0);
    expect(fake.chatRequests()).toHaveLength(1);
    const sent = fake.chatRequests()[0]!;
    expect(sent.headers.authorization).toBe("Bearer sk-test-123");
    expect(sent.body).toEqual({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "You are a context summarization assistant." },
        { role: "user", content: "<conversation>\n[User]: refactor the auth module\n</conversation>\n\nSummarize." },
      ],
      max_tokens: 13107,
    });
  });

  it("uses max_completion_tokens and no sampling parameters for reasoning models", async () => {
    for (const model of ["o3-mini", "o1", "gpt-5-mini", "openai/o4-mini"]) {
      await summarizer({ model }).summarize(request({ maxTokens: 8192 }));
      const body = fake.chatRequests().at(-1)!.body!;
      expect(body.model).toBe(model);
      expect(body.max_completion_tokens).toBe(8192);
      expect(body).not.toHaveProperty("max_tokens");
      expect(body).not.toHaveProperty("temperature");
    }
  });

  it("strips <think> blocks from the answer", async () => {
    fake.setHandler(() => reply.text("<think>\nlet me reason about it\n</think>\n\n## Goal\nShip it"));
    const result = await summarizer({ model: "deepseek-r1" }).summarize(request());
    expect(result.text).toBe("## Goal\nShip it");
  });

  it("treats an answer that is only reasoning as a failure", async () => {
    fake.setHandler(() => reply.text("<think>still thinking when the budget ran out", { finishReason: "length" }));
    const error = await summarizer().summarize(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as Error).message).toMatch(/empty summary.*token budget/);
  });

  it("retries after a 429, waiting what retry-after-ms asks, then succeeds", async () => {
    fake.enqueue(reply.rateLimited({ retryAfterMs: 30 }), reply.text("## Goal\nafter the rate limit"));
    const started = Date.now();
    const result = await summarizer().summarize(request());
    expect(result.text).toBe("## Goal\nafter the rate limit");
    expect(fake.chatRequests()).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it("retries a dropped connection", async () => {
    fake.enqueue(reply.disconnect(), reply.text("## Goal\nafter a network error"));
    const result = await summarizer().summarize(request());
    expect(result.text).toBe("## Goal\nafter a network error");
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it("gives up after maxRetries on repeated 500s with the provider's message", async () => {
    fake.setHandler(() => reply.serverError("upstream model exploded"));
    const error = await summarizer({ maxRetries: 2 }).summarize(request()).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as Error).message).toBe("summarizer openai:gpt-4o-mini failed: HTTP 500: upstream model exploded (after 3 attempts)");
    expect((error as RequestFailedError).data).toMatchObject({ status: 500, attempts: 3, summarizer: "openai:gpt-4o-mini" });
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it("does not retry a 400 and reports the provider's message and code", async () => {
    fake.setHandler(() => reply.badRequest("The model `nope` does not exist", "model_not_found"));
    const error = await summarizer({ model: "nope" }).summarize(request()).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as Error).message).toContain("HTTP 400: The model `nope` does not exist");
    expect((error as RequestFailedError).data).toMatchObject({ status: 400, code: "model_not_found", type: "invalid_request_error" });
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it("fails at once when the server asks to wait longer than the deadline allows", async () => {
    // Waiting for the retry (2 h) or for the deadline (1 h) would outlast the test's own timeout.
    fake.setHandler(() => reply.rateLimited({ retryAfterSeconds: 7_200 }));
    const error = await summarizer({ timeoutMs: 3_600_000 }).summarize(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as Error).message).toMatch(/HTTP 429.*no time left to retry within 3600000 ms/);
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it("times out a model that never answers", async () => {
    fake.setHandler(() => reply.hang());
    const error = await summarizer({ timeoutMs: 200 }).summarize(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as Error).message).toContain("timed out after 200 ms");
  });

  it("aborts a slow model call as soon as the signal fires, with CancelledError", async () => {
    // The answer would come after the test's own timeout: a call that settles did not wait for it.
    fake.setHandler(() => reply.delayed(60_000, reply.text("too late")));
    const controller = new AbortController();
    const call = summarizer({ timeoutMs: 120_000 }).summarize(request({ signal: controller.signal })).catch((e: unknown) => e);
    await until(() => fake.chatRequests().length === 1);

    controller.abort();
    expect(await call).toBeInstanceOf(CancelledError);
    await until(() => fake.chatRequests()[0]!.disconnected);
  });

  it("aborts during a retry wait without waiting it out", async () => {
    fake.setHandler(() => reply.rateLimited({ retryAfterSeconds: 3_600 }));
    const lines: string[] = [];
    const sink = addLogSink((_level, message) => lines.push(message));
    const controller = new AbortController();
    const call = summarizer({ timeoutMs: 7_200_000 }).summarize(request({ signal: controller.signal })).catch((e: unknown) => e);
    // Said just before the wait begins.
    await until(() => lines.some((line) => line.includes("retrying in")));
    sink.dispose();

    // The retry wait (1 h) would outlast the test's own timeout: a call that settles did not wait it out.
    controller.abort();
    expect(await call).toBeInstanceOf(CancelledError);
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it("makes no request when the signal is already aborted", async () => {
    await expect(summarizer().summarize(request({ signal: AbortSignal.abort() }))).rejects.toBeInstanceOf(CancelledError);
    expect(fake.requests).toHaveLength(0);
  });

  it("reads the key at call time and names the variable when it is missing", async () => {
    const env: NodeJS.ProcessEnv = {};
    const s = summarizer({ env });
    const error = await s.summarize(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as Error).message).toContain("TEST_SUMMARY_KEY");
    expect(fake.requests).toHaveLength(0);

    env.TEST_SUMMARY_KEY = "sk-later";
    await s.summarize(request());
    expect(fake.chatRequests()[0]!.headers.authorization).toBe("Bearer sk-later");
  });
});
