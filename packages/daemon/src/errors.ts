/**
 * Application errors: thrown anywhere in the daemon, turned into JSON-RPC errors in one place
 * (server/). The `code` is the stable `data.code` string clients switch on.
 */
import { AppErrorCode, ErrorCodes, type InputErrorCode } from "@base-context/protocol";

export class AppError extends Error {
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "AppError";
  }

  get rpcCode(): number {
    return AppErrorCode[this.code];
  }
}

/** A failure of something the daemon depends on (model, plugin): -32803 with a human message. */
export class RequestFailedError extends Error {
  readonly rpcCode = ErrorCodes.RequestFailed;
  constructor(
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "RequestFailedError";
  }
}

/**
 * The session store cannot be reached: its server is down, the connection was lost, or it did not
 * answer in time (the PostgreSQL engine's `PostgresUnavailableError`). Whether a write in flight
 * was committed is unknown: a retry with the same requestId is answered once (docs/storage.md).
 */
export class StoreUnavailableError extends Error {
  /** The SQLSTATE or system error code behind it, when there is one (e.g. "ECONNREFUSED", "57P01"). */
  declare readonly code?: string;

  constructor(message: string, code?: string) {
    super(message);
    this.name = "StoreUnavailableError";
    if (code !== undefined) this.code = code;
  }
}

/** Input over one of the daemon's limits (`limits.*` settings): -32602 with a stable data.code. */
export class LimitError extends Error {
  readonly rpcCode = ErrorCodes.InvalidParams;
  constructor(
    readonly code: InputErrorCode,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "LimitError";
  }
}

/** The operation was cancelled ($/cancelRequest or an abort): -32800, nothing written. */
export class CancelledError extends Error {
  readonly rpcCode = ErrorCodes.RequestCancelled;
  constructor(message = "request cancelled") {
    super(message);
    this.name = "CancelledError";
  }
}

export const sessionNotFound = (sessionId: string) =>
  new AppError("session_not_found", `no session with id "${sessionId}"`, { sessionId });
export const entryNotFound = (sessionId: string, entryId: string) =>
  new AppError("entry_not_found", `session "${sessionId}" has no entry "${entryId}"`, { sessionId, entryId });
