import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../../../../test/support/fake-openai.js";
import { CancelledError, RequestFailedError } from "../errors.js";
import { ClientModelError, type ClientCompletionParams, type ClientModel } from "./client-model-summarizer.js";
import {
  createSummarizer,
  DEFAULT_SUMMARIZER_MODEL,
  summarizerChain,
  summarizerDetails,
  summarizeWithFallback,
  type SummarizerSettings,
} from "./create.js";
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
  return {
    provider: "auto",
    apiKeyEnv: "OPENAI_API_KEY",
    fallback: true,
    timeoutMs: 10_000,
    maxRetries: 2,
    baseURL: fake.baseURL,
    ...overrides,
  };
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

/** A client's model answering from a script: each call gets the next reply (a text, an error, or a hang). */
function scriptedClient(
  replies: Array<string | ClientModelError | "hang">,
  connected = true,
): ClientModel & { asked: ClientCompletionParams[] } {
  const asked: ClientCompletionParams[] = [];
  return {
    label: 'the client "test"',
    connected,
    asked,
    complete: (params, options) => {
      asked.push(params);
      const reply = replies.shift() ?? "no more replies";
      if (reply === "hang") {
        return new Promise((_, reject) => {
          const timer = setTimeout(
            () => reject(new ClientModelError(`no answer within ${options.timeoutMs} ms`, false)),
            options.timeoutMs,
          );
          options.signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(new CancelledError());
          });
        });
      }
      return reply instanceof ClientModelError ? Promise.reject(reply) : Promise.resolve({ text: reply, model: "client-llm" });
    },
  };
}

describe("createSummarizer", () => {
  it("auto: a key variable alone never selects a model; a model named in the settings does", () => {
    expect(createSummarizer(settings({ baseURL: undefined }), withKey).id).toBe("extractive");
    expect(createSummarizer(settings(), withKey, { userNamedModel: false }).id).toBe("extractive");
    expect(createSummarizer(settings({ model: "gpt-4.1-mini" }), withKey).id).toBe("openai:gpt-4.1-mini");
    // A model the project named, while the global settings name none, sends nothing anywhere.
    expect(createSummarizer(settings({ model: "gpt-4.1-mini" }), withKey, { userNamedModel: false }).id).toBe("extractive");
  });

  it("auto: the client's model first, then the named model; a disconnected client is skipped", () => {
    const chain = createSummarizer(settings({ model: "m" }), withKey, { clientModel: scriptedClient([]) });
    expect(summarizerChain(chain).map((s) => s.id)).toEqual(["client", "openai:m"]);
    expect(createSummarizer(settings(), {}, { clientModel: scriptedClient([]) }).id).toBe("client");
    expect(createSummarizer(settings(), {}, { clientModel: scriptedClient([], false) }).id).toBe("extractive");
  });

  it("states where a model's requests go: the settings' baseURL, else OPENAI_BASE_URL, else the provider's default host", () => {
    expect(createSummarizer(settings({ model: "m" }), withKey).description).toBe(`openai:m at ${fake.baseURL.replace(/\/+$/, "")}`);
    expect(createSummarizer(settings({ model: "m", baseURL: undefined }), withKey).description).toBe(
      "openai:m at https://api.openai.com/v1",
    );
    expect(
      createSummarizer(settings({ model: "m", baseURL: undefined }), { ...withKey, OPENAI_BASE_URL: "http://127.0.0.1:9/v1/" }).description,
    ).toBe("openai:m at http://127.0.0.1:9/v1");
  });

  it("extractive and openai are used as configured; the client's model is not used then", () => {
    expect(createSummarizer(settings({ provider: "extractive" }), withKey, { clientModel: scriptedClient([]) }).id).toBe("extractive");
    expect(createSummarizer(settings({ provider: "openai", model: "m" }), {}, { clientModel: scriptedClient([]) }).id).toBe("openai:m");
    expect(createSummarizer(settings({ provider: "openai" }), {}).id).toBe(`openai:${DEFAULT_SUMMARIZER_MODEL}`);
  });
});

describe("summarizeWithFallback along the auto chain", () => {
  it("the client's model writes the summary, asked with the summary's purpose, prompt and session", async () => {
    const client = scriptedClient(["## Goal\nwritten by the client"]);
    const outcome = await summarizeWithFallback(createSummarizer(settings(), {}, { clientModel: client }), request({ sessionId: "s1" }), {
      fallback: true,
    });
    expect(outcome).toMatchObject({ text: "## Goal\nwritten by the client", summarizer: "client:client-llm" });
    expect(outcome.fallback).toBeUndefined();
    expect(client.asked).toEqual([
      {
        purpose: "compaction",
        system: "system prompt",
        messages: [{ role: "user", content: request().prompt }],
        maxTokens: 4096,
        sessionId: "s1",
      },
    ]);
  });

  it("a client error falls to the named model, then the extractive summarizer, recording each reason", async () => {
    fake.setHandler(() => reply.badRequest("no such model", "model_not_found"));
    const client = scriptedClient([
      new ClientModelError("the client answered model/complete with an error (-32603): quota exceeded", false),
    ]);
    const outcome = await summarizeWithFallback(
      createSummarizer(settings({ model: "m" }), withKey, { clientModel: client, ...FAST }),
      request(),
      { fallback: true },
    );
    expect(outcome.summarizer).toBe("extractive");
    expect(outcome.fallbacks?.map((f) => f.from)).toEqual(["client", "openai:m"]);
    expect(outcome.fallbacks?.[0]?.error).toBe(
      "summarizer client failed: the client answered model/complete with an error (-32603): quota exceeded",
    );
    expect(outcome.fallbacks?.[1]?.error).toContain("HTTP 400: no such model");
    expect(outcome.fallback).toEqual(outcome.fallbacks?.[0]);
    expect(summarizerDetails([outcome])).toMatchObject({ summarizer: "extractive", fallbacks: outcome.fallbacks });
  });

  it("retries a client error that says a retry may help, within maxRetries", async () => {
    const client = scriptedClient([new ClientModelError("busy", true), "## Goal\nsecond try"]);
    const outcome = await summarizeWithFallback(createSummarizer(settings(), {}, { clientModel: client, ...FAST }), request(), {
      fallback: true,
    });
    expect(outcome.text).toBe("## Goal\nsecond try");
    expect(client.asked).toHaveLength(2);
  });

  it("a client that does not answer within timeoutMs falls back with the reason", async () => {
    const client = scriptedClient(["hang"]);
    const outcome = await summarizeWithFallback(createSummarizer(settings({ timeoutMs: 50 }), {}, { clientModel: client }), request(), {
      fallback: true,
    });
    expect(outcome.summarizer).toBe("extractive");
    expect(outcome.fallback?.error).toBe("summarizer client failed: no answer within 50 ms");
  });

  it("with fallback off, the client's failure reaches the caller", async () => {
    const client = scriptedClient([new ClientModelError("refused", false)]);
    const error = await summarizeWithFallback(createSummarizer(settings({ fallback: false }), {}, { clientModel: client }), request(), {
      fallback: false,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as Error).message).toBe("summarizer client failed: refused");
  });

  it("cancelling aborts the client's request and never falls back", async () => {
    const client = scriptedClient(["hang"]);
    const controller = new AbortController();
    const call = summarizeWithFallback(createSummarizer(settings(), {}, { clientModel: client }), request({ signal: controller.signal }), {
      fallback: true,
    }).catch((e: unknown) => e);
    controller.abort();
    expect(await call).toBeInstanceOf(CancelledError);
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
    const summarizer = createSummarizer(settings({ model: DEFAULT_SUMMARIZER_MODEL }), withKey, FAST);
    const outcome = await summarizeWithFallback(summarizer, request(), { fallback: true });

    expect(outcome.summarizer).toBe("extractive");
    expect(outcome.text).toMatch(/^## Goal\nCurrent task: .*\nBackground, the first request: Refactor the auth module in src\/auth\//);
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
    const summarizer = createSummarizer(settings({ fallback: false, model: "m" }), withKey, FAST);
    const error = await summarizeWithFallback(summarizer, request(), { fallback: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as RequestFailedError).message).toContain("HTTP 400: context_length_exceeded: too long");
    expect((error as RequestFailedError).data).toMatchObject({ status: 400, code: "context_length_exceeded" });
  });

  it("never falls back on cancellation", async () => {
    fake.setHandler(() => reply.hang());
    const controller = new AbortController();
    const summarizer = createSummarizer(settings({ model: "m" }), withKey, FAST);
    const call = summarizeWithFallback(summarizer, request({ signal: controller.signal }), { fallback: true }).catch((e: unknown) => e);
    while (fake.chatRequests().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await call).toBeInstanceOf(CancelledError);
  });

  it("uses the extractive summarizer directly when auto has no model, even with a key (no fallback recorded, nothing sent)", async () => {
    const outcome = await summarizeWithFallback(createSummarizer(settings(), withKey), request(), { fallback: true });
    expect(outcome.summarizer).toBe("extractive");
    expect(outcome.fallback).toBeUndefined();
    expect(fake.requests).toHaveLength(0);
  });
});
