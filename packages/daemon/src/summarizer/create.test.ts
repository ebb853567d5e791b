import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../../../../test/support/fake-openai.js";
import { CancelledError, RequestFailedError } from "../errors.js";
import { createSummarizer, DEFAULT_SUMMARIZER_MODEL, summarizeWithFallback, type SummarizerSettings } from "./create.js";
import { refactorAuthSession } from "./extractive/fixtures.js";
import type { SummaryRequest } from "./types.js";

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

const FAST = { backoff: { baseDelayMs: 1, maxDelayMs: 5 } };

function settings(overrides: Partial<SummarizerSettings> = {}): SummarizerSettings {
  return { provider: "auto", apiKeyEnv: "OPENAI_API_KEY", fallback: true, timeoutMs: 10_000, maxRetries: 2, baseURL: fake.baseURL, ...overrides };
}

function request(overrides: Partial<SummaryRequest> = {}): SummaryRequest {
  return {
    kind: "history",
    messages: refactorAuthSession(),
    system: "system prompt",
    prompt: "<conversation>\n[User]: Refactor the auth module\n</conversation>",
    maxTokens: 4096,
    ...overrides,
  };
}

const withKey = { OPENAI_API_KEY: "sk-test" };

describe("createSummarizer", () => {
  it("auto: uses the model when the key variable is set, with the default model", () => {
    expect(createSummarizer(settings({ baseURL: undefined }), withKey).id).toBe(`openai:${DEFAULT_SUMMARIZER_MODEL}`);
    expect(createSummarizer(settings({ model: "gpt-4.1-mini" }), withKey).id).toBe("openai:gpt-4.1-mini");
  });

  it("auto: uses the extractive summarizer when the key variable is not set", () => {
    expect(createSummarizer(settings(), {}).id).toBe("extractive");
    expect(createSummarizer(settings({ apiKeyEnv: "OTHER_KEY" }), withKey).id).toBe("extractive");
    expect(createSummarizer(settings({ apiKeyEnv: "OTHER_KEY" }), { OTHER_KEY: "k" }).id).toBe(`openai:${DEFAULT_SUMMARIZER_MODEL}`);
  });

  it("extractive and openai are used as configured", () => {
    expect(createSummarizer(settings({ provider: "extractive" }), withKey).id).toBe("extractive");
    expect(createSummarizer(settings({ provider: "openai", model: "m" }), {}).id).toBe("openai:m");
  });
});

describe("summarizeWithFallback", () => {
  it("returns the model's summary, sent to the configured base URL and model", async () => {
    const summarizer = createSummarizer(settings({ model: "gpt-4.1-mini" }), withKey, FAST);
    const outcome = await summarizeWithFallback(summarizer, request(), { fallback: true });

    expect(outcome.summarizer).toBe("openai:gpt-4.1-mini");
    expect(outcome.fallback).toBeUndefined();
    expect(outcome.text).toContain("Fake summary of: Refactor the auth module");
    expect(fake.chatRequests()[0]!.body?.model).toBe("gpt-4.1-mini");
  });

  it("falls back to the extractive summarizer when the model fails, and records why", async () => {
    fake.setHandler(() => reply.serverError("model overloaded"));
    const summarizer = createSummarizer(settings(), withKey, FAST);
    const outcome = await summarizeWithFallback(summarizer, request(), { fallback: true });

    expect(outcome.summarizer).toBe("extractive");
    expect(outcome.text).toMatch(/^## Goal\nRefactor the auth module in src\/auth\//);
    expect(outcome.fallback).toEqual({
      from: `openai:${DEFAULT_SUMMARIZER_MODEL}`,
      error: `summarizer openai:${DEFAULT_SUMMARIZER_MODEL} failed: HTTP 500: model overloaded (after 3 attempts)`,
    });
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it("falls back when provider is openai but the key is missing", async () => {
    const outcome = await summarizeWithFallback(createSummarizer(settings({ provider: "openai" }), {}), request(), { fallback: true });
    expect(outcome.summarizer).toBe("extractive");
    expect(outcome.fallback?.error).toContain("OPENAI_API_KEY");
    expect(fake.requests).toHaveLength(0);
  });

  it("rethrows the model's RequestFailedError when fallback is off", async () => {
    fake.setHandler(() => reply.badRequest("context_length_exceeded: too long", "context_length_exceeded"));
    const summarizer = createSummarizer(settings({ fallback: false }), withKey, FAST);
    const error = await summarizeWithFallback(summarizer, request(), { fallback: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as RequestFailedError).message).toContain("HTTP 400: context_length_exceeded: too long");
    expect((error as RequestFailedError).data).toMatchObject({ status: 400, code: "context_length_exceeded" });
  });

  it("never falls back on cancellation", async () => {
    fake.setHandler(() => reply.hang());
    const controller = new AbortController();
    const summarizer = createSummarizer(settings(), withKey, FAST);
    const call = summarizeWithFallback(summarizer, request({ signal: controller.signal }), { fallback: true }).catch((e: unknown) => e);
    while (fake.chatRequests().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await call).toBeInstanceOf(CancelledError);
  });

  it("uses the extractive summarizer directly when auto finds no key (no fallback recorded)", async () => {
    const outcome = await summarizeWithFallback(createSummarizer(settings(), {}), request(), { fallback: true });
    expect(outcome.summarizer).toBe("extractive");
    expect(outcome.fallback).toBeUndefined();
    expect(fake.requests).toHaveLength(0);
  });
});
