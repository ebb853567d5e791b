/**
 * First results of requests that carried a client `requestId`, per session. A retry after a lost
 * reply finds the stored result instead of writing again. Rows are written in the same
 * transaction as what the request wrote, so "result stored" and "entries written" never disagree.
 */
import { AppError } from "../errors.js";
import type { StoreEngine } from "./store-engine.js";
import type { SqlStatements } from "./statements.js";

export interface StoredRequestResult {
  method: string;
  result: unknown;
}

const SELECT = "SELECT method, result FROM request_results WHERE session_id = ? AND request_id = ?";
const INSERT = "INSERT INTO request_results (session_id, request_id, method, result, created_ms) VALUES (?, ?, ?, ?, ?)";
const PRUNE = "DELETE FROM request_results WHERE created_ms < ?";

export class RequestResults {
  constructor(
    private readonly sql: SqlStatements,
    private readonly engine?: Pick<StoreEngine, "requestResultWithEntries">,
  ) {}

  /**
   * The stored result of `requestId`, if any. A requestId first used by another method is an
   * AppError request_id_conflict: replaying that result would answer with the wrong shape.
   */
  find(sessionId: string, requestId: string, method: string): StoredRequestResult | undefined {
    const row = this.sql.get<{ method: string; result: string }>(SELECT).get(sessionId, requestId);
    if (!row) return undefined;
    if (row.method !== method) {
      throw new AppError(
        "request_id_conflict",
        `requestId "${requestId}" was already used for ${row.method} in session "${sessionId}"`,
        { sessionId, requestId, method: row.method },
      );
    }
    return { method: row.method, result: JSON.parse(row.result) as unknown };
  }

  save(sessionId: string, requestId: string, method: string, result: unknown, nowMs: number): void {
    const row = { sessionId, requestId, method, result: JSON.stringify(result), createdMs: nowMs };
    if (this.engine?.requestResultWithEntries?.(row)) return;
    this.sql.get(INSERT).run(row.sessionId, row.requestId, row.method, row.result, row.createdMs);
  }

  /** Retries come within minutes; results older than `olderThanMs` are dropped so the table stays small. */
  prune(olderThanMs: number): void {
    this.sql.get(PRUNE).run(olderThanMs);
  }
}
