/**
 * Choosing the summarizer from settings, and falling back to the extractive one when the model
 * fails (docs/design.md#summarizers).
 */
import type { Settings } from "@base-context/protocol";
import { CancelledError, RequestFailedError } from "../errors.js";
import { log } from "../log.js";
import { ClientModelSummarizer, type ClientModel } from "./client-model-summarizer.js";
import { EXTRACTIVE_SUMMARIZER_ID, ExtractiveSummarizer } from "./extractive/index.js";
import { OpenAISummarizer } from "./openai.js";
import type { BackoffOptions } from "./retry.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "./types.js";

export type SummarizerSettings = Settings["summarizer"];

/** The model used when `summarizer.model` is not set: small, cheap and good at summaries. */
export const DEFAULT_SUMMARIZER_MODEL = "gpt-4o-mini";

export interface CreateSummarizerOptions {
  /** Shorter retry backoff (tests). */
  readonly backoff?: BackoffOptions;
  /** The model of the client whose request started the work, when it offers one (`model/complete`). */
  readonly clientModel?: ClientModel | undefined;
  /**
   * Whether the user's own settings name a model (`summarizer.model` in the global settings):
   * only then does `auto` send a conversation to a model host. Default: `settings.model` is set
   * (callers that know where it came from say so; a project's settings never decide it).
   */
  readonly userNamedModel?: boolean;
}

/**
 * - `extractive`: always the offline summarizer;
 * - `openai`: the configured model, even without a key (the call then fails clearly, and falls
 *   back if allowed);
 * - `auto`: in order, the connected client's model when it offers one, the model the user's
 *   settings name, else the extractive summarizer. A key variable alone never sends anything:
 *   without a named model no request leaves for a model host.
 *
 * The result's `next` links are the fallback chain (the extractive summarizer ends it, see
 * summarizeWithFallback). Cheap: call it per summary with the current settings, so settings
 * changes apply at once.
 */
export function createSummarizer(
  settings: SummarizerSettings,
  env: NodeJS.ProcessEnv = process.env,
  options: CreateSummarizerOptions = {},
): Summarizer {
  if (settings.provider === "extractive") return new ExtractiveSummarizer();
  const model = (): OpenAISummarizer =>
    new OpenAISummarizer({
      model: settings.model ?? DEFAULT_SUMMARIZER_MODEL,
      ...(settings.baseURL !== undefined ? { baseURL: settings.baseURL } : {}),
      apiKeyEnv: settings.apiKeyEnv,
      env,
      timeoutMs: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      ...(options.backoff ? { backoff: options.backoff } : {}),
    });
  if (settings.provider === "openai") return model();

  const named = options.userNamedModel ?? settings.model !== undefined;
  const configured = named ? model() : undefined;
  const client = options.clientModel?.connected
    ? new ClientModelSummarizer(options.clientModel, {
        timeoutMs: settings.timeoutMs,
        maxRetries: settings.maxRetries,
        ...(options.backoff ? { backoff: options.backoff } : {}),
      })
    : undefined;
  if (client && configured) client.next = configured;
  return client ?? configured ?? new ExtractiveSummarizer();
}

/** The summarizers `summarizer` tries in order (itself, then its `next` links). */
export function summarizerChain(summarizer: Summarizer): Summarizer[] {
  const chain: Summarizer[] = [];
  for (let current: Summarizer | undefined = summarizer; current !== undefined && !chain.includes(current); current = current.next)
    chain.push(current);
  return chain;
}

/**
 * `client, then openai:gpt-4o-mini at https://…, then extractive`: what a run will try, in order,
 * for progress and logs. A model host is always named: no surprise hosts.
 */
export function describeChain(summarizer: Summarizer, fallback: boolean): string {
  const chain = summarizerChain(summarizer);
  const names = chain.map((member) => (member instanceof OpenAISummarizer ? member.description : member.id));
  if (fallback && !chain.some((member) => member.id === EXTRACTIVE_SUMMARIZER_ID)) names.push(EXTRACTIVE_SUMMARIZER_ID);
  return names.join(", then ");
}

export interface FallbackRecord {
  /** The summarizer that failed, e.g. `"client"` or `"openai:gpt-4o-mini"`. */
  readonly from: string;
  /** Its error message (provider message and status, or why the client did not answer). */
  readonly error: string;
}

export interface SummaryOutcome extends SummaryResult {
  /** The first failure, when a summarizer failed and the next one in the chain wrote the text. */
  readonly fallback?: FallbackRecord;
  /** Every failure on the way, in order (the client's model, then the configured model…). */
  readonly fallbacks?: readonly FallbackRecord[];
}

/** What a summary entry's `details` record about who wrote it (compaction and branch summaries alike). */
export interface SummarizerDetails {
  /** Who wrote the text: `"client:<model>"`, `"openai:<model>"`, `"extractive"`, or several joined by "+". */
  summarizer: string;
  /** The first failure when a summarizer failed and another stood in (kept for readers of older entries). */
  fallback?: { from: string; error: string };
  /** Every failure on the way to the summarizer that wrote the text, in order. */
  fallbacks?: { from: string; error: string }[];
}

/** The summarizers behind the parts of one summary (ids joined by "+"), and the first fallback among them. */
export function summarizerDetails(outcomes: readonly SummaryOutcome[]): SummarizerDetails {
  const fallbacks = outcomes.flatMap((outcome) => outcome.fallbacks ?? (outcome.fallback ? [outcome.fallback] : []));
  return {
    summarizer: [...new Set(outcomes.map((outcome) => outcome.summarizer))].join("+"),
    ...(fallbacks.length > 0 ? { fallback: { ...fallbacks[0]! }, fallbacks: fallbacks.map((record) => ({ ...record })) } : {}),
  };
}

export interface FallbackOptions {
  /** `summarizer.fallback`: use the extractive summarizer when the model fails. */
  readonly fallback: boolean;
  /** What to fall back to (default: the extractive summarizer). */
  readonly fallbackSummarizer?: Summarizer;
}

/**
 * Runs `summarizer`, then on failure each `next` in its chain, and with `fallback` on the
 * extractive summarizer last; every failure is recorded (`fallbacks`). Cancellation never falls
 * back (the caller wants nothing written). With `fallback` off the first `RequestFailedError`
 * reaches the caller.
 */
export async function summarizeWithFallback(
  summarizer: Summarizer,
  request: SummaryRequest,
  options: FallbackOptions,
): Promise<SummaryOutcome> {
  const fallbacks: FallbackRecord[] = [];
  let current: Summarizer = summarizer;
  for (;;) {
    try {
      const result = await current.summarize(request);
      return fallbacks.length > 0 ? { ...result, fallback: fallbacks[0]!, fallbacks } : result;
    } catch (error) {
      if (error instanceof CancelledError || request.signal?.aborted) throw error instanceof CancelledError ? error : new CancelledError();
      const failure =
        error instanceof RequestFailedError
          ? error
          : new RequestFailedError(`summarizer ${current.id} failed: ${errorMessage(error)}`, { summarizer: current.id });
      if (!options.fallback) throw failure;
      const fallback: Summarizer = current.next ?? options.fallbackSummarizer ?? new ExtractiveSummarizer();
      const tried = fallbacks.some((record) => record.from === fallback.id) || fallback === current;
      if (tried || fallback.id === current.id) throw failure;
      log(
        "warn",
        `${failure.message}; falling back to ${fallback.id === EXTRACTIVE_SUMMARIZER_ID ? "the extractive summarizer" : fallback.id}`,
      );
      fallbacks.push({ from: current.id, error: failure.message });
      current = fallback;
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
