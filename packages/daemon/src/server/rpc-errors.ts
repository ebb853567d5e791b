/**
 * The one place where daemon errors become JSON-RPC errors. Everything that crosses the wire
 * goes through `toResponseError`, so codes and `data.code` strings stay stable.
 */
import { ErrorCodes } from "@base-context/protocol";
import { ResponseError } from "vscode-jsonrpc";
import type { z } from "zod";
import { AppError, CancelledError, LimitError, RequestFailedError } from "../errors.js";
import { log } from "../log.js";

export function invalidParams(method: string, error: z.ZodError): ResponseError<unknown> {
  const issues = error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
    code: issue.code,
  }));
  const first = issues[0];
  const where = first?.path ? ` at "${first.path}"` : "";
  return new ResponseError(
    ErrorCodes.InvalidParams,
    `invalid params for ${method}${where}: ${first?.message ?? "rejected"}`,
    { code: "invalid_params", issues },
  );
}

export function toResponseError(method: string, error: unknown): ResponseError<unknown> {
  if (error instanceof ResponseError) return error;
  if (error instanceof AppError) return new ResponseError(error.rpcCode, error.message, { ...error.data, code: error.code });
  if (error instanceof LimitError) return new ResponseError(error.rpcCode, error.message, { ...error.data, code: error.code });
  if (error instanceof CancelledError) return new ResponseError(error.rpcCode, error.message, { code: "cancelled" });
  if (error instanceof RequestFailedError)
    return new ResponseError(error.rpcCode, error.message, { ...error.data, code: "request_failed" });
  const message = error instanceof Error ? error.message : String(error);
  // The PostgreSQL store lost its server (store/postgres/sync-postgres.ts; matched by name: server/
  // does not reach into store/). Whether a write in flight was committed is unknown: a retry with
  // the same requestId is answered once (docs/storage.md).
  if (error instanceof Error && error.name === "PostgresUnavailableError") {
    log("warn", `${method}: the session store is unavailable: ${message}`);
    return new ResponseError(ErrorCodes.RequestFailed, `${method} failed: the session store is unavailable (${message}); retry`, {
      code: "request_failed",
      storeUnavailable: true,
    });
  }
  log("error", `${method} failed: ${error instanceof Error && error.stack ? error.stack : message}`);
  return new ResponseError(ErrorCodes.InternalError, `${method} failed: ${message}`, { code: "internal_error" });
}
