/**
 * How the worker's connections are made: the URL, the timeouts, and values as the store expects
 * them.
 */
import type pg from "pg";
import type { PgWorkerData } from "./messages.js";

type Pg = typeof pg;

// int8 (BIGINT, count(*), identity columns) and numeric (sum(bigint), avg()) as JS numbers, as
// SQLite gives them to the store, rather than strings. The store keeps counts and sizes, far
// below 2^53, and no money.
const INT8 = 20;
const INT8_ARRAY = 1016;
const NUMERIC = 1700;
const NUMERIC_ARRAY = 1231;

function typeParsers(pgModule: Pg) {
  const toNumber = (value: string) => Number(value);
  const numbers = (value: unknown): unknown => (Array.isArray(value) ? value.map(numbers) : typeof value === "string" ? Number(value) : value);
  return {
    getTypeParser(oid: number, format?: "text" | "binary") {
      if (format === "binary") return pgModule.types.getTypeParser(oid as never, format);
      if (oid === INT8 || oid === NUMERIC) return toNumber;
      if (oid === INT8_ARRAY || oid === NUMERIC_ARRAY) {
        const parseArray = pgModule.types.getTypeParser(oid as never, "text") as (value: string) => unknown;
        return (value: string) => numbers(parseArray(value));
      }
      return pgModule.types.getTypeParser(oid as never, "text");
    },
  };
}

/** What the connections are made with: the worker's and the main thread's (../event-loop-commits.ts). */
export type ClientSettings = Pick<PgWorkerData, "url" | "applicationName" | "connectTimeoutMs" | "statementTimeoutMs">;

export function clientConfig(pgModule: Pg, data: ClientSettings) {
  return {
    connectionString: data.url,
    application_name: data.applicationName,
    connectionTimeoutMillis: data.connectTimeoutMs,
    statement_timeout: data.statementTimeoutMs,
    // The server's guard against a session that dies between statements of a transaction.
    idle_in_transaction_session_timeout: Math.max(60_000, 2 * data.statementTimeoutMs),
    // A network that stops answering: give up on the client side a little after the server would have.
    query_timeout: data.statementTimeoutMs + 1000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: typeParsers(pgModule),
  };
}
