/**
 * Summaries written by the connected client's own model (docs/summaries.md): the daemon sends
 * `model/complete` to the client whose request started the work. The client answers like a model
 * would, so it is treated like one: an error reply is retried when it says a retry may help
 * (`data.retryable`, or a retryable HTTP `data.status`), the whole call has the
 * `summarizer.timeoutMs` deadline, and a failure goes down the fallback chain like any model's.
 */
import type { ModelMessage, ModelPurpose } from "@base-context/protocol";
import { CancelledError, RequestFailedError } from "../errors.js";
import { log } from "../log.js";
import { stripThinking } from "./model-output.js";
import type { CompletionInput, CompletionOutput } from "./openai.js";
import { abortableSleep, backoffDelayMs, DEFAULT_BACKOFF, isRetryableStatus, type BackoffOptions } from "./retry.js";
import type { Summarizer, SummaryKind, SummaryRequest, SummaryResult } from "./types.js";

/** One `model/complete` request, as the daemon sends it. */
export interface ClientCompletionParams {
  purpose: ModelPurpose;
  system?: string;
  messages: ModelMessage[];
  maxTokens: number;
  sessionId?: string;
}

export interface ClientCompletion {
  text: string;
  model?: string | undefined;
  usage?: { input?: number | undefined; output?: number | undefined } | undefined;
}

/**
 * Why a client's answer was not a completion. `retryable`: another attempt may help (the client
 * said so); a hang (timeout) or a closed connection is never retried.
 */
export class ClientModelError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "ClientModelError";
  }
}

/**
 * The model of one connected client, as the server exposes it (server/connection-client-model.ts). It sends
 * one request and reports its outcome: the answer, a ClientModelError (error reply, timeout,
 * disconnection), or CancelledError when `signal` aborts (after sending `$/cancelRequest`).
 */
export interface ClientModel {
  /** Who answers, for logs and messages, e.g. `the client "my-agent"`. */
  readonly label: string;
  /** False once the connection has ended: the work it started falls back. */
  readonly connected: boolean;
  complete(params: ClientCompletionParams, options: { signal?: AbortSignal | undefined; timeoutMs: number }): Promise<ClientCompletion>;
}

export const CLIENT_SUMMARIZER_ID = "client";

const PURPOSE: Record<SummaryKind, ModelPurpose> = { history: "compaction", turnPrefix: "turnPrefix", branch: "branchSummary" };

export interface ClientModelSummarizerOptions {
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly backoff?: BackoffOptions;
}

export class ClientModelSummarizer implements Summarizer {
  readonly id = CLIENT_SUMMARIZER_ID;
  readonly description: string;
  next?: Summarizer;
  private readonly backoff: BackoffOptions;

  constructor(
    private readonly model: ClientModel,
    private readonly options: ClientModelSummarizerOptions,
  ) {
    this.description = `the client's own model (${model.label}, through model/complete)`;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
  }

  async summarize(request: SummaryRequest): Promise<SummaryResult> {
    const output = await this.ask({
      purpose: PURPOSE[request.kind],
      ...(request.system.length > 0 ? { system: request.system } : {}),
      messages: [{ role: "user", content: request.prompt }],
      maxTokens: Math.max(1, Math.floor(request.maxTokens)),
      ...(request.sessionId !== undefined ? { sessionId: request.sessionId } : {}),
    }, request.signal);
    if (output.text.length === 0) {
      throw new RequestFailedError(`summarizer ${this.id} failed: ${this.model.label} returned an empty summary`, { summarizer: this.id });
    }
    return { text: output.text, summarizer: clientSummarizerId(output.model), ...(output.usage ? { usage: output.usage } : {}) };
  }

  /** A plugin's `ctx.complete`, answered by the client's model. */
  async complete(input: CompletionInput & { sessionId?: string | undefined }): Promise<CompletionOutput & { model?: string | undefined }> {
    return this.ask(
      {
        purpose: "plugin",
        ...(input.system.length > 0 ? { system: input.system } : {}),
        messages:
          input.conversation !== undefined
            ? input.conversation.map((message) => ({ ...message }))
            : [{ role: "user", content: input.prompt }],
        maxTokens: Math.max(1, Math.floor(input.maxTokens)),
        ...(input.sessionId !== undefined ? { sessionId: input.sessionId } : {}),
      },
      input.signal,
    );
  }

  /** One completion with retries, within one deadline for all attempts. */
  private async ask(
    params: ClientCompletionParams,
    signal: AbortSignal | undefined,
  ): Promise<CompletionOutput & { model?: string | undefined }> {
    if (signal?.aborted) throw new CancelledError();
    const deadline = Date.now() + this.options.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const attempts = attempt + 1;
      try {
        if (!this.model.connected) throw new ClientModelError(`${this.model.label} disconnected before it could answer`, false);
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new ClientModelError(`${this.model.label} did not answer within ${this.options.timeoutMs} ms`, false);
        const answer = await this.model.complete(params, { signal, timeoutMs: remaining });
        const usage =
          answer.usage !== undefined
            ? {
                inputTokens: answer.usage.input ?? 0,
                outputTokens: answer.usage.output ?? 0,
                totalTokens: (answer.usage.input ?? 0) + (answer.usage.output ?? 0),
              }
            : undefined;
        return {
          text: stripThinking(answer.text),
          finishReason: null,
          ...(usage ? { usage } : {}),
          ...(answer.model !== undefined ? { model: answer.model } : {}),
        };
      } catch (error) {
        if (error instanceof CancelledError || signal?.aborted) throw error instanceof CancelledError ? error : new CancelledError();
        const failure =
          error instanceof ClientModelError ? error : new ClientModelError(error instanceof Error ? error.message : String(error), false);
        if (!failure.retryable || attempt >= this.options.maxRetries) throw this.failed(failure, attempts);
        const waitMs = backoffDelayMs(attempt, this.backoff);
        if (Date.now() + waitMs >= deadline)
          throw this.failed(failure, attempts, `; no time left to retry within ${this.options.timeoutMs} ms`);
        log(
          "info",
          `summarizer ${this.id}: ${failure.message}; retrying in ${Math.round(waitMs)} ms (attempt ${attempts + 1} of ${this.options.maxRetries + 1})`,
        );
        await abortableSleep(waitMs, signal);
      }
    }
  }

  private failed(failure: ClientModelError, attempts: number, extra = ""): RequestFailedError {
    const tries = attempts > 1 ? ` (after ${attempts} attempts)` : "";
    return new RequestFailedError(`summarizer ${this.id} failed: ${failure.message}${extra}${tries}`, {
      summarizer: this.id,
      attempts,
      ...failure.data,
    });
  }
}

/** `client:<model>` when the client said which model answered, else `client`. */
export function clientSummarizerId(model: string | undefined): string {
  return model !== undefined && model.length > 0 ? `${CLIENT_SUMMARIZER_ID}:${model}` : CLIENT_SUMMARIZER_ID;
}

/** Whether an error reply's `data` says another attempt may help. */
export function clientErrorIsRetryable(data: unknown): boolean {
  if (typeof data !== "object" || data === null) return false;
  const { retryable, status } = data as { retryable?: unknown; status?: unknown };
  if (typeof retryable === "boolean") return retryable;
  return typeof status === "number" && isRetryableStatus(status);
}
