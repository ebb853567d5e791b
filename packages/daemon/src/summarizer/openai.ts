/**
 * Summaries from an OpenAI-compatible chat-completions endpoint, through the official `openai`
 * package. Retries, the overall deadline and cancellation are handled here (see retry.ts for why
 * the SDK's own retry loop is switched off).
 */
import type OpenAI from "openai";
import { CancelledError, RequestFailedError } from "../errors.js";
import { log } from "../log.js";
import { isReasoningModel, stripThinking } from "./model-output.js";
import { abortableSleep, backoffDelayMs, DEFAULT_BACKOFF, isRetryableStatus, retryAfterMs, type BackoffOptions } from "./retry.js";
import type { Summarizer, SummaryRequest, SummaryResult, SummaryUsage } from "./types.js";

type OpenAISdk = typeof import("openai");
let sdk: Promise<OpenAISdk> | undefined;
/**
 * The SDK is ~115 modules: loaded on the first model call, not when the daemon starts (most
 * daemons never call a model, and none needs it to answer `initialize`).
 */
const loadSdk = (): Promise<OpenAISdk> => (sdk ??= timedImport("the OpenAI client", () => import("openai")));

/** A package loaded on first need, and the debug log line that says so. */
async function timedImport<T>(what: string, load: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const loaded = await load();
  log("debug", `loaded ${what} on first use (${(performance.now() - started).toFixed(0)} ms)`);
  return loaded;
}

type ChatRequestBody = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatResponse = OpenAI.Chat.Completions.ChatCompletion;

/** The `openai` package's default host when neither settings nor OPENAI_BASE_URL say otherwise. */
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Where requests of a model summarizer go: `summarizer.baseURL`, else OPENAI_BASE_URL, else the provider's default host. */
export function modelEndpoint(baseURL: string | undefined, env: NodeJS.ProcessEnv): string {
  return (baseURL ?? (env.OPENAI_BASE_URL || undefined) ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, "");
}

export interface OpenAISummarizerOptions {
  readonly model: string;
  /** Undefined: `OPENAI_BASE_URL` from `env`, else the provider's default host (see `modelEndpoint`). */
  readonly baseURL?: string;
  /** Name of the environment variable holding the key; read at each call, never stored. */
  readonly apiKeyEnv: string;
  /** Where `apiKeyEnv` is looked up. Default: `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Deadline for the whole call, retries and their waits included. */
  readonly timeoutMs: number;
  /** Extra attempts after the first, on 408/409/429/5xx and network errors. */
  readonly maxRetries: number;
  /** Backoff between attempts when the server does not say how long to wait (tests shorten it). */
  readonly backoff?: BackoffOptions;
}

export interface CompletionInput {
  readonly system: string;
  readonly prompt: string;
  /**
   * A conversation to send instead of `prompt` (plugins' `ctx.complete({ messages })`). Not named
   * `messages`: a SummaryRequest is passed here as is, and its `messages` are the ones to summarize.
   */
  readonly conversation?: readonly { readonly role: "user" | "assistant"; readonly content: string }[];
  readonly maxTokens: number;
  readonly signal?: AbortSignal;
}

export interface CompletionOutput {
  /** The answer with reasoning blocks removed; may be empty. */
  readonly text: string;
  readonly finishReason: string | null;
  readonly usage?: SummaryUsage;
}

/** What one failed attempt tells us: the message to show, and whether another attempt may help. */
interface AttemptFailure {
  readonly message: string;
  readonly status?: number;
  readonly type?: string;
  readonly code?: string;
  readonly retryable: boolean;
  readonly waitMs?: number;
}

export class OpenAISummarizer implements Summarizer {
  readonly id: string;
  readonly description: string;
  next?: Summarizer;
  private readonly env: NodeJS.ProcessEnv;
  private readonly backoff: BackoffOptions;

  constructor(private readonly options: OpenAISummarizerOptions) {
    this.id = `openai:${options.model}`;
    this.env = options.env ?? process.env;
    this.description = `${this.id} at ${modelEndpoint(options.baseURL, this.env)}`;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
  }

  async summarize(request: SummaryRequest): Promise<SummaryResult> {
    const output = await this.complete(request);
    if (output.text.length === 0) {
      const why = output.finishReason === "length" ? " (it used its whole token budget before answering)" : "";
      throw new RequestFailedError(`summarizer ${this.id} returned an empty summary${why}`, {
        summarizer: this.id,
        finishReason: output.finishReason,
      });
    }
    return { text: output.text, summarizer: this.id, ...(output.usage ? { usage: output.usage } : {}) };
  }

  /** One chat completion (system + user prompt), with retries, deadline and cancellation. */
  async complete(input: CompletionInput): Promise<CompletionOutput> {
    const { signal } = input;
    if (signal?.aborted) throw new CancelledError();
    const apiKey = this.apiKey();
    const { default: OpenAIClient, APIConnectionTimeoutError, APIError } = await loadSdk();
    // The host stated in `description` (doctor, logs, results) is the one used, never an SDK default of its own.
    const client = new OpenAIClient({
      apiKey,
      baseURL: modelEndpoint(this.options.baseURL, this.env),
      maxRetries: 0,
      timeout: this.options.timeoutMs,
    });
    const body = this.requestBody(input);
    const deadline = Date.now() + this.options.timeoutMs;

    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - Date.now();
      try {
        if (remaining <= 0) throw new APIConnectionTimeoutError();
        const response = await client.chat.completions.create(body, { signal, timeout: remaining, maxRetries: 0 });
        return readCompletion(response);
      } catch (error) {
        if (signal?.aborted) throw new CancelledError();
        const failure = this.describeFailure(error, APIConnectionTimeoutError, APIError);
        const attempts = attempt + 1;
        if (!failure.retryable || attempt >= this.options.maxRetries) throw this.failed(failure, attempts);
        const waitMs = failure.waitMs ?? backoffDelayMs(attempt, this.backoff);
        if (Date.now() + waitMs >= deadline) {
          throw this.failed(
            { ...failure, message: `${failure.message}; no time left to retry within ${this.options.timeoutMs} ms` },
            attempts,
          );
        }
        log(
          "info",
          `summarizer ${this.id}: ${failure.message}; retrying in ${Math.round(waitMs)} ms (attempt ${attempts + 1} of ${this.options.maxRetries + 1})`,
        );
        await abortableSleep(waitMs, signal);
      }
    }
  }

  private apiKey(): string {
    const apiKey = this.env[this.options.apiKeyEnv];
    if (!apiKey) {
      throw new RequestFailedError(
        `summarizer ${this.id}: the environment variable ${this.options.apiKeyEnv} (summarizer.apiKeyEnv) is not set`,
        {
          summarizer: this.id,
          reason: "missing_api_key",
        },
      );
    }
    return apiKey;
  }

  private requestBody(input: CompletionInput): ChatRequestBody {
    const messages: ChatMessage[] = [];
    if (input.system.length > 0) messages.push({ role: "system", content: input.system });
    if (input.conversation !== undefined) messages.push(...input.conversation.map((message) => ({ ...message })));
    else messages.push({ role: "user", content: input.prompt });
    const limit = Math.max(1, Math.floor(input.maxTokens));
    // No temperature for anyone: reasoning models reject it, and the default suits the others.
    return isReasoningModel(this.options.model)
      ? { model: this.options.model, messages, max_completion_tokens: limit }
      : { model: this.options.model, messages, max_tokens: limit };
  }

  private describeFailure(
    error: unknown,
    APIConnectionTimeoutError: OpenAISdk["APIConnectionTimeoutError"],
    APIError: OpenAISdk["APIError"],
  ): AttemptFailure {
    if (error instanceof APIConnectionTimeoutError) {
      return { message: `model request timed out after ${this.options.timeoutMs} ms`, retryable: false };
    }
    if (error instanceof APIError && error.status !== undefined) {
      const body = error.error as { message?: unknown } | undefined;
      const detail = typeof body?.message === "string" && body.message.length > 0 ? body.message : error.message;
      const hint = error.headers?.get("x-should-retry");
      const retryable = hint === "true" ? true : hint === "false" ? false : isRetryableStatus(error.status);
      const waitMs = retryAfterMs(error.headers);
      return {
        message: `HTTP ${error.status}: ${detail}`,
        status: error.status,
        ...(error.type ? { type: error.type } : {}),
        ...(error.code ? { code: error.code } : {}),
        retryable,
        ...(waitMs !== undefined ? { waitMs } : {}),
      };
    }
    if (error instanceof APIError) {
      // Connection refused, reset, DNS: the SDK wraps them without a status.
      const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
      return { message: `${error.message.replace(/\.$/, "")}${cause}`, retryable: true };
    }
    return { message: error instanceof Error ? error.message : String(error), retryable: false };
  }

  private failed(failure: AttemptFailure, attempts: number): RequestFailedError {
    const tries = attempts > 1 ? ` (after ${attempts} attempts)` : "";
    return new RequestFailedError(`summarizer ${this.id} failed: ${failure.message}${tries}`, {
      summarizer: this.id,
      providerMessage: failure.message,
      attempts,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      ...(failure.type !== undefined ? { type: failure.type } : {}),
      ...(failure.code !== undefined ? { code: failure.code } : {}),
    });
  }
}

function readCompletion(response: ChatResponse): CompletionOutput {
  // Some OpenAI-compatible servers omit fields the SDK types promise; read defensively.
  const choice = response.choices?.[0];
  const content = choice?.message?.content;
  const text = typeof content === "string" ? stripThinking(content) : "";
  const usage = response.usage
    ? {
        inputTokens: response.usage.prompt_tokens ?? 0,
        outputTokens: response.usage.completion_tokens ?? 0,
        totalTokens: response.usage.total_tokens ?? (response.usage.prompt_tokens ?? 0) + (response.usage.completion_tokens ?? 0),
      }
    : undefined;
  return { text, finishReason: choice?.finish_reason ?? null, ...(usage ? { usage } : {}) };
}
