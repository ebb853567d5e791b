/**
 * The one place where daemon errors become JSON-RPC errors. Everything that crosses the wire
 * goes through `toResponseError`, so codes and `data.code` strings stay stable.
 */
import { ErrorCodes } from "@base-context/protocol";
import { ResponseError } from "vscode-jsonrpc";
import type { z } from "zod";
import { AppError, CancelledError, LimitError, RequestFailedError, StoreUnavailableError } from "../errors.js";
import { log } from "../log.js";

/** Issues listed in an invalid-params error's `data` (the first is in its message). */
const MAX_ISSUES = 20;
/** An error's message, or a string in its `data`, longer than this is cut (the client's input is never echoed whole). */
const MAX_ERROR_TEXT = 2000;

/** `text` cut to MAX_ERROR_TEXT characters, saying how long it was. */
function bounded(text: string, max = MAX_ERROR_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

/** `data` with every long string cut (one level deep and in arrays of strings: what errors carry). */
function boundedData(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === "string") out[key] = bounded(value);
    else if (Array.isArray(value) && value.length > MAX_ISSUES) out[key] = value.slice(0, MAX_ISSUES);
    else out[key] = value;
  }
  return out;
}

export function invalidParams(method: string, error: z.ZodError): ResponseError<unknown> {
  // Paths name the client's keys (a record's, an unknown one's) and messages may quote them: both bounded.
  const issues = error.issues.slice(0, MAX_ISSUES).map((issue) => ({
    path: bounded(issue.path.map(String).join("."), 200),
    message: bounded(issue.message, 500),
    code: issue.code,
  }));
  const first = issues[0];
  const where = first?.path ? ` at "${first.path}"` : "";
  return new ResponseError(
    ErrorCodes.InvalidParams,
    `invalid params for ${method}${where}: ${first?.message ?? "rejected"}`,
    { code: "invalid_params", issues, ...(error.issues.length > MAX_ISSUES ? { issueCount: error.issues.length } : {}) },
  );
}

export function toResponseError(method: string, error: unknown): ResponseError<unknown> {
  const response = responseError(method, error);
  const data = response.data as Record<string, unknown> | undefined;
  if (response.message.length <= MAX_ERROR_TEXT && (data === undefined || typeof data !== "object")) return response;
  return new ResponseError(response.code, bounded(response.message), data && typeof data === "object" ? boundedData(data) : data);
}

function responseError(method: string, error: unknown): ResponseError<unknown> {
  if (error instanceof ResponseError) return error;
  if (error instanceof AppError) return new ResponseError(error.rpcCode, error.message, { ...error.data, code: error.code });
  if (error instanceof LimitError) return new ResponseError(error.rpcCode, error.message, { ...error.data, code: error.code });
  if (error instanceof CancelledError) return new ResponseError(error.rpcCode, error.message, { code: "cancelled" });
  if (error instanceof RequestFailedError)
    return new ResponseError(error.rpcCode, error.message, { ...error.data, code: "request_failed" });
  const message = error instanceof Error ? error.message : String(error);
  // The PostgreSQL store lost its server (store/postgres/sync-postgres.ts). Whether a write in flight
  // was committed is unknown: a retry with the same requestId is answered once (docs/storage.md).
  if (error instanceof StoreUnavailableError) {
    log("warn", `${method}: the session store is unavailable: ${message}`);
    return new ResponseError(ErrorCodes.RequestFailed, `${method} failed: the session store is unavailable (${message}); retry`, {
      code: "request_failed",
      storeUnavailable: true,
    });
  }
  log("error", `${method} failed: ${error instanceof Error && error.stack ? error.stack : message}`);
  return new ResponseError(ErrorCodes.InternalError, `${method} failed: ${message}`, { code: "internal_error" });
}
