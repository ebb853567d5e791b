/**
 * A connected client's model, reached with `model/complete` over that client's own connection
 * (stdio, or its socket connection). Created only when the client opted in at `initialize`
 * (`capabilities.model.complete: true`): a client that did not never receives the request.
 *
 * The request's fate is decided here: its answer (checked against the declaration), an error
 * reply, no answer within the deadline (then `$/cancelRequest` is sent: the client may stop its
 * model), the work's cancellation (`$/cancelRequest` too), or the connection ending (every
 * request still waiting fails at once, and later ones are not sent).
 */
import { ModelComplete } from "@base-context/protocol";
import { CancellationTokenSource, type MessageConnection } from "vscode-jsonrpc";
import { CancelledError } from "../errors.js";
import {
  clientErrorIsRetryable,
  ClientModelError,
  type ClientCompletion,
  type ClientCompletionParams,
  type ClientModel,
} from "../summarizer/index.js";

export class ConnectionClientModel implements ClientModel {
  private closed = false;
  private readonly waiting = new Set<(error: ClientModelError) => void>();

  constructor(
    private readonly connection: MessageConnection,
    readonly label: string,
    /**
     * The longest summary answer accepted, in UTF-8 bytes (`limits.maxSummaryBytes`): a larger one
     * fails as `too_large` and the work falls back. A plugin's `ctx.complete` answer is bounded by
     * the plugin boundary instead (`plugins.maxMessageBytes`).
     */
    private readonly maxSummaryBytes: () => number = () => Number.POSITIVE_INFINITY,
  ) {}

  get connected(): boolean {
    return !this.closed;
  }

  /** The connection ended: requests still waiting fail now (their work falls back). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fail of [...this.waiting])
      fail(new ClientModelError(`${this.label} disconnected before it answered`, false, { reason: "disconnected" }));
  }

  complete(params: ClientCompletionParams, options: { signal?: AbortSignal | undefined; timeoutMs: number }): Promise<ClientCompletion> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new CancelledError());
    if (this.closed)
      return Promise.reject(new ClientModelError(`${this.label} disconnected before it could be asked`, false, { reason: "disconnected" }));
    const cancellation = new CancellationTokenSource();
    return new Promise<ClientCompletion>((resolve, reject) => {
      let settled = false;
      const settle = (finish: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.waiting.delete(fail);
        finish();
        cancellation.dispose();
      };
      const fail = (error: ClientModelError): void => settle(() => reject(error));
      const onAbort = (): void => {
        cancellation.cancel();
        settle(() => reject(new CancelledError()));
      };
      const timer = setTimeout(() => {
        cancellation.cancel();
        fail(
          new ClientModelError(`${this.label} did not answer model/complete within ${options.timeoutMs} ms`, false, { reason: "timeout" }),
        );
      }, options.timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.add(fail);

      let sent: Promise<unknown>;
      try {
        sent = this.connection.sendRequest(ModelComplete.method, params, cancellation.token);
      } catch (error) {
        // A connection already closed or disposed throws at once.
        this.closed = true;
        fail(
          new ClientModelError(
            `${this.label} disconnected before it could be asked (${error instanceof Error ? error.message : String(error)})`,
            false,
            { reason: "disconnected" },
          ),
        );
        return;
      }
      sent.then(
        (raw: unknown) => {
          const tooLarge = params.purpose === "plugin" ? undefined : oversize(raw, this.maxSummaryBytes());
          if (tooLarge !== undefined) {
            fail(
              new ClientModelError(
                `${this.label} answered model/complete with ${tooLarge} bytes of text, over limits.maxSummaryBytes (${this.maxSummaryBytes()} bytes)`,
                false,
                { reason: "too_large", textBytes: tooLarge },
              ),
            );
            return;
          }
          const parsed = ModelComplete.result.safeParse(raw);
          if (parsed.success) settle(() => resolve(parsed.data));
          else
            fail(
              new ClientModelError(
                `${this.label} answered model/complete with an invalid result: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "result"}: ${issue.message}`).join("; ")}`,
                false,
                { reason: "invalid_result" },
              ),
            );
        },
        (error: unknown) => {
          const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
          const text = typeof message === "string" ? message : String(error);
          fail(
            new ClientModelError(
              `${this.label} answered model/complete with an error${typeof code === "number" ? ` (${code})` : ""}: ${text}`,
              clientErrorIsRetryable(data),
              {
                reason: "client_error",
                ...(typeof code === "number" ? { clientCode: code } : {}),
              },
            ),
          );
        },
      );
    });
  }
}

/** The UTF-8 bytes of an answer's `text` when they are over `max`, else undefined. */
function oversize(raw: unknown, max: number): number | undefined {
  const text = (raw as { text?: unknown } | null)?.text;
  if (typeof text !== "string" || text.length * 3 <= max) return undefined;
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > max ? bytes : undefined;
}

/** `the client "my-agent"` from `initialize`'s clientInfo, else `the client`. */
export function clientLabel(clientInfo: { name?: unknown } | undefined, connectionId?: number): string {
  const name = typeof clientInfo?.name === "string" && clientInfo.name.length > 0 ? ` "${clientInfo.name}"` : "";
  return `the client${name}${connectionId !== undefined ? ` (connection ${connectionId})` : ""}`;
}
