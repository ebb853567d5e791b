/**
 * Choosing the summarizer from settings, and falling back to the extractive one when the model
 * fails (docs/design.md#summarizers).
 */
import type { Settings } from "@base-context/protocol";
import { CancelledError, RequestFailedError } from "../errors.js";
import { log } from "../log.js";
import { ExtractiveSummarizer } from "./extractive/index.js";
import { OpenAISummarizer } from "./openai.js";
import type { BackoffOptions } from "./retry.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "./types.js";

export type SummarizerSettings = Settings["summarizer"];

/** The model used when `summarizer.model` is not set: small, cheap and good at summaries. */
export const DEFAULT_SUMMARIZER_MODEL = "gpt-4o-mini";

export interface CreateSummarizerOptions {
  /** Shorter retry backoff (tests). */
  readonly backoff?: BackoffOptions;
}

/**
 * - `extractive`: always the offline summarizer;
 * - `openai`: the model, even without a key (the call then fails clearly, and falls back if allowed);
 * - `auto`: the model when the `apiKeyEnv` variable is set (model and base URL have defaults),
 *   else the extractive summarizer.
 *
 * Cheap: call it per summary with the current settings, so settings changes apply at once.
 */
export function createSummarizer(settings: SummarizerSettings, env: NodeJS.ProcessEnv = process.env, options: CreateSummarizerOptions = {}): Summarizer {
  if (settings.provider === "extractive") return new ExtractiveSummarizer();
  if (settings.provider === "auto" && !env[settings.apiKeyEnv]) return new ExtractiveSummarizer();
  return new OpenAISummarizer({
    model: settings.model ?? DEFAULT_SUMMARIZER_MODEL,
    ...(settings.baseURL !== undefined ? { baseURL: settings.baseURL } : {}),
    apiKeyEnv: settings.apiKeyEnv,
    env,
    timeoutMs: settings.timeoutMs,
    maxRetries: settings.maxRetries,
    ...(options.backoff ? { backoff: options.backoff } : {}),
  });
}

export interface SummaryOutcome extends SummaryResult {
  /** Set when the model failed and the extractive summarizer produced the text instead. */
  readonly fallback?: {
    /** The summarizer that failed, e.g. `"openai:gpt-4o-mini"`. */
    readonly from: string;
    /** Its error message (provider message and status included). */
    readonly error: string;
  };
}

/** What a summary entry's `details` record about who wrote it (compaction and branch summaries alike). */
export interface SummarizerDetails {
  /** Who wrote the text: `"openai:<model>"`, `"extractive"`, or several joined by "+". */
  summarizer: string;
  /** Set when the model failed and the extractive summarizer stood in. */
  fallback?: { from: string; error: string };
}

/** The summarizers behind the parts of one summary (ids joined by "+"), and the first fallback among them. */
export function summarizerDetails(outcomes: readonly SummaryOutcome[]): SummarizerDetails {
  const fallback = outcomes.find((outcome) => outcome.fallback)?.fallback;
  return {
    summarizer: [...new Set(outcomes.map((outcome) => outcome.summarizer))].join("+"),
    ...(fallback ? { fallback: { from: fallback.from, error: fallback.error } } : {}),
  };
}

export interface FallbackOptions {
  /** `summarizer.fallback`: use the extractive summarizer when the model fails. */
  readonly fallback: boolean;
  /** What to fall back to (default: the extractive summarizer). */
  readonly fallbackSummarizer?: Summarizer;
}

/**
 * Runs `summarizer`; on failure, with `fallback` on, runs the extractive summarizer and records
 * why. Cancellation never falls back (the caller wants nothing written), and with `fallback` off
 * the `RequestFailedError` reaches the caller.
 */
export async function summarizeWithFallback(summarizer: Summarizer, request: SummaryRequest, options: FallbackOptions): Promise<SummaryOutcome> {
  try {
    return await summarizer.summarize(request);
  } catch (error) {
    if (error instanceof CancelledError || request.signal?.aborted) throw error instanceof CancelledError ? error : new CancelledError();
    const failure = error instanceof RequestFailedError ? error : new RequestFailedError(`summarizer ${summarizer.id} failed: ${errorMessage(error)}`, { summarizer: summarizer.id });
    const fallback = options.fallbackSummarizer ?? new ExtractiveSummarizer();
    if (!options.fallback || fallback.id === summarizer.id) throw failure;
    log("warn", `${failure.message}; falling back to the ${fallback.id} summarizer`);
    const result = await fallback.summarize(request);
    return { ...result, fallback: { from: summarizer.id, error: failure.message } };
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
