/**
 * Errors in the PostgreSQL worker: telling a lost or unreachable server from an error in a
 * statement, and putting either on the wire for the main thread (which throws
 * `PostgresUnavailableError` or `PostgresError` from it, ../sync-postgres.ts).
 */
import type { PgWireError } from "./messages.js";

/** PostgreSQL cannot be reached, or the connection a request needed is gone. */
export class Unavailable extends Error {
  constructor(
    message: string,
    readonly code?: unknown,
  ) {
    super(message);
  }
}

/** A request that makes no sense (a transaction that does not exist): a bug of the caller. */
export class Usage extends Error {}

const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "25P03"]);

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * A lost or unreachable server, as opposed to an error in a statement: what the worker found so
 * (`Unavailable`: a failed connect, a query on a connection that ended or went unanswered,
 * transactions.ts), the server's connection classes of SQLSTATE (08…, shutting down, too many
 * connections), or a socket's system error (`ECONNRESET`, `EPIPE` …). Never by its message.
 */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof Unavailable) return true;
  const state = sqlState(error);
  if (state) return UNAVAILABLE_SQLSTATES.has(state) || (state.startsWith("08") && state !== "08P01");
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code);
}

/** The error as data; `statementTimeoutMs` is named in a statement timeout's message. */
export function toWire(error: unknown, statementTimeoutMs: number): PgWireError {
  const e = (error instanceof Error ? error : new Error(String(error))) as Error & {
    code?: unknown;
    detail?: string;
    constraint?: string;
  };
  const state = sqlState(e);
  let message = e.message;
  if (state === "57014" && /statement timeout/.test(message)) message = `${message} (statement_timeout is ${statementTimeoutMs} ms)`;
  const kind = e instanceof Usage ? "usage" : isConnectionError(e) ? "unavailable" : state ? "postgres" : "usage";
  const wire: PgWireError = { kind, name: e.name, message };
  if (e.stack) wire.stack = e.stack;
  if (state) wire.code = state;
  else if (typeof e.code === "string") wire.code = e.code;
  if (typeof e.detail === "string") wire.detail = e.detail;
  if (typeof e.constraint === "string") wire.constraint = e.constraint;
  return wire;
}
