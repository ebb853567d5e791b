/**
 * Context-overflow detection (docs/design.md#overflow): did the model's reply fail because the context was
 * longer than the model accepts? Providers say so in their own words, so the error text is matched
 * against the messages they are known to send; some accept the request silently and report a
 * prompt larger than the window in `usage` instead.
 *
 * A false positive costs a needless summary and hides the real error from the user (a rate limit
 * "fixed" by compacting comes straight back), so messages about rate limits, quotas and throttling
 * never count, even when they also mention tokens ("Too many tokens, please wait" is AWS Bedrock
 * throttling, not an overflow).
 */
import type { AssistantMessage } from "@base-context/protocol";

/** Why a reply counts as a context overflow. */
export type OverflowSignal =
  /** The provider's error message says so; `provider` names who is known to send that wording. */
  | { readonly kind: "error"; readonly provider: string; readonly errorMessage: string }
  /** A normal stop whose reported prompt is larger than the window (the provider truncated silently). */
  | { readonly kind: "usage"; readonly promptTokens: number; readonly contextWindow: number };

interface OverflowWording {
  readonly provider: string;
  readonly pattern: RegExp;
}

/** Known wordings, with a real message of each in overflow.test.ts. */
const OVERFLOW_WORDINGS: readonly OverflowWording[] = [
  { provider: "Anthropic", pattern: /prompt is too long/i },
  { provider: "Anthropic", pattern: /input length and `?max_tokens`? exceed context limit/i },
  // 413 for a request body over the byte limit: a smaller context is the fix here too.
  { provider: "Anthropic", pattern: /request_too_large/i },
  { provider: "OpenAI", pattern: /exceeds the context window/i },
  // OpenAI chat completions, Azure, DeepSeek, OpenRouter, vLLM and most OpenAI-compatible servers.
  { provider: "OpenAI-compatible", pattern: /maximum context length is \d+ tokens/i },
  { provider: "OpenAI-compatible", pattern: /exceed(?:s|ed)? (?:the )?(?:model'?s )?max(?:imum)? context length/i },
  { provider: "OpenAI", pattern: /context[_ ]length[_ ]exceeded/i },
  { provider: "Google Gemini", pattern: /input token count.*exceeds the maximum/i },
  { provider: "xAI", pattern: /maximum prompt length is \d+/i },
  { provider: "Groq / Cerebras", pattern: /reduce the length of the messages/i },
  { provider: "Mistral", pattern: /too large for model with \d+ maximum context length/i },
  { provider: "Amazon Bedrock", pattern: /input is too long for (?:the )?requested model/i },
  { provider: "OpenRouter", pattern: /exceeds the maximum allowed input length/i },
  { provider: "Together AI", pattern: /is longer than the model'?s context length/i },
  { provider: "llama.cpp", pattern: /exceeds? the available context size/i },
  { provider: "llama.cpp", pattern: /context size has been exceeded/i },
  { provider: "llama-cpp-python", pattern: /requested tokens \(\d+\) exceed context window/i },
  { provider: "vLLM", pattern: /input prompt \(\d+ tokens\) is too long/i },
  { provider: "Hugging Face TGI", pattern: /`?inputs`? tokens \+ `?max_new_tokens`? must be <=/i },
  { provider: "Ollama", pattern: /prompt too long; exceeded (?:max )?context length/i },
  { provider: "LM Studio", pattern: /greater than the context length/i },
  { provider: "GitHub Copilot", pattern: /token count of \d+ exceeds the limit of \d+/i },
  { provider: "MiniMax", pattern: /context window exceeds limit/i },
  { provider: "Kimi", pattern: /exceeded model token limit/i },
  { provider: "Qwen (DashScope)", pattern: /range of input length should be/i },
  { provider: "z.ai", pattern: /model_context_window_exceeded/i },
  { provider: "generic", pattern: /context[_ ]window[_ ]exceeded/i },
  { provider: "generic", pattern: /too many tokens/i },
  { provider: "generic", pattern: /token limit exceeded/i },
  // Cerebras and Mistral answer 400 / 413 without a body; the OpenAI SDK words it "400 status code (no body)".
  { provider: "Cerebras / Mistral", pattern: /^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i },
  { provider: "HTTP 413", pattern: /request entity too large/i },
];

/** Wordings of errors that are not overflows, checked first: they win over any match above. */
const NOT_OVERFLOW_WORDINGS: readonly RegExp[] = [
  /rate[ _-]?limit/i,
  /too many requests/i,
  /throttl/i,
  /please wait/i,
  /quota/i,
  /resource(?: has been)? exhausted/i,
  /\bper (?:min(?:ute)?|hour|day)\b/i,
  /\btokens per (?:min(?:ute)?|day)\b/i,
  /\b(?:TPM|RPM|TPD)\b/,
  /overloaded/i,
  /^(?:Service unavailable|Throttling error):/i,
  /(?:^|\bstatus(?: code)?:?\s*)429\b/i,
];

/** The provider whose overflow wording `errorMessage` uses, or undefined when it is not an overflow. */
export function overflowProviderOf(errorMessage: string): string | undefined {
  if (NOT_OVERFLOW_WORDINGS.some((pattern) => pattern.test(errorMessage))) return undefined;
  return OVERFLOW_WORDINGS.find((wording) => wording.pattern.test(errorMessage))?.provider;
}

/**
 * Tokens of the prompt the provider reports: input plus cached input read and written (providers
 * that report cache buckets separately leave them out of `input`).
 */
export function promptTokensOf(message: AssistantMessage): number {
  const usage = message.usage;
  if (!usage) return 0;
  return usage.input + usage.cacheRead + usage.cacheWrite;
}

/**
 * Whether `message` failed (or silently degraded) because its context did not fit `contextWindow`.
 * Only `errorMessage` is read for the error text: the content of a failed reply may hold partial
 * model output that merely talks about tokens.
 */
export function detectContextOverflow(message: AssistantMessage, contextWindow: number): OverflowSignal | undefined {
  if (message.stopReason === "error") {
    const errorMessage = message.errorMessage ?? "";
    const provider = overflowProviderOf(errorMessage);
    return provider === undefined ? undefined : { kind: "error", provider, errorMessage };
  }
  if (message.stopReason === "stop") {
    const promptTokens = promptTokensOf(message);
    if (promptTokens > contextWindow) return { kind: "usage", promptTokens, contextWindow };
  }
  return undefined;
}

/** One line for messages and logs. */
export function describeOverflow(signal: OverflowSignal): string {
  return signal.kind === "error"
    ? `context overflow (${signal.provider}): ${signal.errorMessage}`
    : `context overflow: the reply reports a ${signal.promptTokens}-token prompt, larger than the ${signal.contextWindow}-token window`;
}
