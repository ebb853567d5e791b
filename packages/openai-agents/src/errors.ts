/**
 * The errors a `BaseContextSession` raises (the package README's "Errors"): every one is a
 * `BaseContextError` with a stable `code`. They extend the SDK's `UserError`, so the runner treats
 * them as the application's errors and `run()` rejects with them as they are.
 */
import { UserError } from "@openai/agents";

export type BaseContextErrorCode =
  /** The session's options are not usable (e.g. `contextWindow` is not a positive integer). */
  | "invalid_options"
  /** An item or a history operation the session cannot store (e.g. a compaction item missing). */
  | "invalid_items"
  /** A history transaction met another state than it expected (the SDK's own wording). */
  | "history_conflict"
  /** The daemon could not be started or reached, or went away: `DaemonGoneError`. */
  | "daemon_gone"
  /** The daemon answered a request with an error: `rpcCode` and `data` are its JSON-RPC error's. */
  | "daemon_error";

export class BaseContextError extends UserError {
  override readonly name: string = "BaseContextError";
  /** The daemon's JSON-RPC error code (`daemon_error` only). */
  readonly rpcCode?: number;
  /** The daemon's error data (`daemon_error` only): its own `code` ("invalid_entry", "session_busy"…) and details. */
  readonly data?: unknown;

  constructor(
    readonly code: BaseContextErrorCode,
    message: string,
    options: { cause?: unknown; rpcCode?: number; data?: unknown } = {},
  ) {
    super(message);
    if (options.cause !== undefined) this.cause = options.cause;
    if (options.rpcCode !== undefined) this.rpcCode = options.rpcCode;
    if (options.data !== undefined) this.data = options.data;
  }
}

/**
 * The daemon could not be started or reached, or it went away: every request of the session fails
 * with it from then on, and `session.signal` is aborted with it. A spawned daemon's exit names its
 * code or signal (`exitCode`, `signal`); the message ends with the tail of its log.
 */
export class DaemonGoneError extends BaseContextError {
  override readonly name = "DaemonGoneError";

  constructor(
    message: string,
    readonly exit: { exitCode?: number | null; signal?: NodeJS.Signals | null } = {},
  ) {
    super("daemon_gone", message);
  }
}

/**
 * A daemon's JSON-RPC error (a `ResponseError` of the protocol's client) as this package's error,
 * with the daemon's hint (what to do, e.g. the exact command) after its message.
 */
export function daemonError(error: unknown, method: string): BaseContextError | undefined {
  const { code, message, data } = (error ?? {}) as { code?: unknown; message?: unknown; data?: { hint?: unknown } };
  if (typeof code !== "number" || typeof message !== "string") return undefined;
  const hint = typeof data?.hint === "string" ? `\n${data.hint}` : "";
  return new BaseContextError("daemon_error", `the daemon refused ${method}: ${message}${hint}`, { cause: error, rpcCode: code, data });
}
