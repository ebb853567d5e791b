import type { AssistantMessage } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { describeOverflow, detectContextOverflow, overflowProviderOf } from "./overflow.js";

/** Error messages providers really send when the context is too long (from their APIs and bug reports). */
const OVERFLOWS: readonly (readonly [provider: string, message: string])[] = [
  ["Anthropic", "prompt is too long: 213462 tokens > 200000 maximum"],
  [
    "Anthropic",
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 209353 tokens > 199999 maximum"}}',
  ],
  [
    "Anthropic",
    "input length and max_tokens exceed context limit: 90402 + 116650 > 204648, decrease input length or max_tokens and try again",
  ],
  [
    "Anthropic",
    '413 {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}',
  ],
  ["Anthropic via Bedrock", "The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum"],
  [
    "OpenAI",
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 204308 tokens. Please reduce the length of the messages.",
  ],
  [
    "OpenAI",
    "This model's maximum context length is 4097 tokens, however you requested 4231 tokens (3975 in your prompt; 256 for the completion). Please reduce your prompt; or completion length.",
  ],
  ["OpenAI Responses", "Your input exceeds the context window of this model. Please adjust your input and try again."],
  ["OpenAI code only", "400 context_length_exceeded"],
  ["Google Gemini", "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."],
  ["xAI", "This model's maximum prompt length is 131072 but the request contains 136973 tokens."],
  ["Groq", "Please reduce the length of the messages or completion."],
  ["Cerebras", "Please reduce the length of the messages or completion. Current length is 42328 while limit is 40000"],
  ["Cerebras", "400 status code (no body)"],
  ["Mistral", "413 status code (no body)"],
  ["Mistral", "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length"],
  ["Amazon Bedrock", "Input is too long for requested model."],
  ["Amazon Bedrock", "The model returned the following errors: Input is too long for requested model."],
  [
    "OpenRouter",
    'This endpoint\'s maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
  ],
  ["OpenRouter / Poolside", "Input length 300000 exceeds the maximum allowed input length of 262144 tokens."],
  [
    "DeepSeek",
    "This model's maximum context length is 65536 tokens. However, you requested 69648 tokens (69648 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
  ],
  [
    "vLLM",
    "This model's maximum context length is 2048 tokens. However, your request has 8 input tokens plus 2045 'max_tokens'. Please reduce one or the other.",
  ],
  ["vLLM (old)", "Input prompt (2664 tokens) is too long and exceeds limit of 2048"],
  ["LiteLLM", "Requested token count exceeds the model's maximum context length of 131072 tokens."],
  ["OpenAI-compatible", "Input length (265330) exceeds model's maximum context length (262144)."],
  ["Together AI", "The input (40000 tokens) is longer than the model's context length (32768 tokens)."],
  ["llama.cpp", "the request exceeds the available context size. try increasing the context size or enable context shift"],
  ["llama.cpp", "request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it"],
  ["llama.cpp", "Context size has been exceeded."],
  ["llama-cpp-python", "Requested tokens (2285) exceed context window of 2048"],
  [
    "Hugging Face TGI",
    "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 6204 `inputs` tokens and 2047 `max_new_tokens`",
  ],
  ["Ollama", "prompt too long; exceeded max context length by 1200 tokens"],
  ["LM Studio", "The number of tokens to keep from the initial prompt is greater than the context length."],
  ["GitHub Copilot", "prompt token count of 130000 exceeds the limit of 128000"],
  ["MiniMax", "invalid params, context window exceeds limit"],
  ["Kimi", "Your request exceeded model token limit: 262144 (requested: 270000)"],
  ["Qwen (DashScope)", "Range of input length should be [1, 30720]"],
  ["z.ai", "model_context_window_exceeded"],
  ["generic", "too many tokens in the request"],
  ["generic", "Token limit exceeded for this request"],
  ["HTTP 413 from a proxy", "413 Request Entity Too Large"],
];

/** Errors that mention tokens or limits but are not overflows: compacting would not help. */
const NOT_OVERFLOWS: readonly (readonly [what: string, message: string])[] = [
  ["AWS Bedrock throttling", "Too many tokens, please wait before trying again."],
  ["AWS Bedrock throttling, prefixed", "ThrottlingException: Too many tokens, please wait before trying again."],
  ["AWS Bedrock daily quota", "Too many tokens per day, please wait before trying again."],
  [
    "AWS Bedrock requests",
    "Too many requests, please wait before trying again. You have sent too many requests.  Wait before trying again.",
  ],
  [
    "Anthropic rate limit",
    "This request would exceed the rate limit for your organization (c26fc127) of 30,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
  ],
  ["Anthropic overloaded", '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'],
  [
    "OpenAI rate limit",
    "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 25000, Requested 8000. Please try again in 6s.",
  ],
  ["OpenAI quota", "You exceeded your current quota, please check your plan and billing details."],
  [
    "OpenAI output limit",
    "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.",
  ],
  [
    "Groq TPM (413)",
    "Request too large for model `llama-3.3-70b-versatile` in organization `org_01` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again.",
  ],
  [
    "Groq rate limit",
    "Rate limit reached for model `llama3-70b-8192` in organization `org_01` on tokens per minute (TPM): Limit 6000, Used 5000, Requested 2000. Please try again in 10s.",
  ],
  ["Gemini quota", "429 Resource has been exhausted (e.g. check quota)."],
  ["Mistral rate limit", "Requests rate limit exceeded"],
  [
    "OpenRouter credits",
    "This request requires more credits, or fewer max_tokens. You requested up to 64000 tokens, but can only afford 1200.",
  ],
  ["server error", "500 The server had an error while processing your request."],
  ["network", "fetch failed: ECONNRESET"],
  ["auth", "401 Incorrect API key provided"],
  ["empty", ""],
];

const failed = (errorMessage: string | undefined, extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content: [],
  stopReason: "error",
  ...(errorMessage !== undefined ? { errorMessage } : {}),
  ...extra,
});

const usage = (input: number, cacheRead = 0, cacheWrite = 0) => ({ input, output: 10, cacheRead, cacheWrite });

describe("overflowProviderOf", () => {
  it.each(OVERFLOWS)("recognizes %s: %s", (_provider, message) => {
    expect(overflowProviderOf(message)).toBeDefined();
  });

  it.each(NOT_OVERFLOWS)("does not mistake %s for an overflow: %s", (_what, message) => {
    expect(overflowProviderOf(message)).toBeUndefined();
  });
});

describe("detectContextOverflow", () => {
  it("reads the error message of a failed reply and names the provider's wording", () => {
    expect(detectContextOverflow(failed("prompt is too long: 213462 tokens > 200000 maximum"), 200_000)).toEqual({
      kind: "error",
      provider: "Anthropic",
      errorMessage: "prompt is too long: 213462 tokens > 200000 maximum",
    });
  });

  it("ignores a failed reply without an error message, and partial content that talks about tokens", () => {
    expect(detectContextOverflow(failed(undefined), 1000)).toBeUndefined();
    expect(detectContextOverflow(failed(undefined, { content: [{ type: "text", text: "prompt is too long" }] }), 1000)).toBeUndefined();
  });

  it("counts a normal stop whose reported prompt is larger than the window (silent overflow)", () => {
    const reply: AssistantMessage = { role: "assistant", content: [], stopReason: "stop", usage: usage(900, 80, 30) };
    expect(detectContextOverflow(reply, 1000)).toEqual({ kind: "usage", promptTokens: 1010, contextWindow: 1000 });
    expect(detectContextOverflow(reply, 1010)).toBeUndefined();
  });

  it("does not read usage of replies that did not stop normally, nor error text of replies that did not fail", () => {
    const big = usage(5000);
    expect(detectContextOverflow({ role: "assistant", content: [], stopReason: "toolUse", usage: big }, 1000)).toBeUndefined();
    expect(detectContextOverflow({ role: "assistant", content: [], stopReason: "aborted", usage: big }, 1000)).toBeUndefined();
    expect(
      detectContextOverflow({ role: "assistant", content: [], stopReason: "stop", errorMessage: "prompt is too long" }, 1000),
    ).toBeUndefined();
  });

  it("never treats a rate limit as an overflow, even from a failed reply", () => {
    expect(detectContextOverflow(failed("Too many tokens, please wait before trying again."), 1000)).toBeUndefined();
  });

  it("describes both kinds in one line", () => {
    expect(describeOverflow({ kind: "usage", promptTokens: 1010, contextWindow: 1000 })).toContain("1010-token prompt");
    expect(describeOverflow({ kind: "error", provider: "xAI", errorMessage: "maximum prompt length is 1" })).toContain("(xAI)");
  });
});
