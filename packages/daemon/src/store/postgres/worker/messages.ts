/**
 * What the daemon's main thread (../sync-postgres.ts) and the PostgreSQL worker say to each other
 * (the workers' one envelope, ../../../worker-messages.ts): types, and the slots of the shared cell.
 *
 * - main → worker (`worker.postMessage`): the `PgRequest`s, one per message or several in an
 *   array (those the main thread made in one synchronous run, handled in order in one turn). One
 *   that carries a `requestId` is answered on the reply port; `begin`, `send`, `abandon`,
 *   `unlisten` and `close` are not.
 * - worker → main, on the reply port: a `PgReply` for each answered request, after which the
 *   worker adds one to the shared cell's REPLIES and wakes the main thread (it reads the port with
 *   `receiveMessageOnPort`). Once its code is loaded and it listens, the worker sets STARTED to 1:
 *   a call's bounded wait for its answer starts then.
 * - worker → main, on `parentPort` (the main thread's event loop): `PgEvent`s, i.e. LISTEN
 *   notifications, "the LISTEN connection came back" and log lines; and the `PgReply` to a commit
 *   sent with `onEventLoop` (one the main thread does not block for).
 *
 * Statements of a transaction are pipelined: `begin` and `send` are written to the connection at
 * once and never waited for; the next answered request of the transaction (a `query`, the
 * `commit`) is answered after them, with the first error among them if one failed. A round trip
 * to the server is therefore paid only where the main thread needs an answer.
 */
import type { MessagePort } from "node:worker_threads";
import type { Reply, WireError } from "../../../worker-messages.js";

export type TransactionMode = "read" | "write";

/** One SQL statement with `$n` parameters; `name` makes it a prepared statement (prepared once per connection). */
export interface Statement {
  text: string;
  params: unknown[];
  name?: string;
}

export type PgRequest =
  | { t: "connect"; requestId: number }
  | ({ t: "query"; requestId: number; txId?: number } & Statement)
  /** A statement of an open transaction whose answer is not waited for (its error is the next answer's). */
  /**
   * `keep`: the statement's result comes back with the transaction's next answer (`PgReply.sent`),
   * e.g. the `seq` an INSERT … RETURNING gave.
   */
  | ({ t: "send"; txId: number; sendId: number; keep?: boolean } & Statement)
  /** The result of a statement sent earlier in the transaction (answered after it). */
  | { t: "result"; requestId: number; txId: number; sendId: number }
  | { t: "exec"; requestId: number; script: string; txId?: number }
  /** Opens a transaction on a connection pinned until it ends; not answered (a failure is the next answer's). */
  | { t: "begin"; txId: number; mode: TransactionMode }
  /** `onEventLoop`: answered on `parentPort` (the main thread does not block for it: SyncPostgres.commitAsync). */
  | { t: "commit"; requestId: number; txId: number; onEventLoop?: boolean }
  | { t: "rollback"; requestId: number; txId: number }
  /** Ends a read transaction without waiting for its COMMIT (nothing it did can fail to commit). */
  | { t: "release"; txId: number }
  | { t: "listen"; requestId: number; channel: string }
  | { t: "unlisten"; channel: string }
  /** Session-level advisory locks (two-key form) on the lock connection, held until unlocked or closed. */
  | { t: "lock"; requestId: number; space: number; key: number }
  | { t: "unlock"; requestId: number; space: number; key: number }
  /** The main thread gave up waiting for this request: drop its connection (it may be stuck). */
  | { t: "abandon"; requestId: number }
  | { t: "close" };

/** What a transaction sends before its commit: its begin and its statements not waited for. */
export type TransactionRequest = Extract<PgRequest, { t: "begin" | "send" }>;

/** A request that is answered. */
export type AnsweredRequest = Extract<PgRequest, { requestId: number }>;

export interface QueryResult {
  rows: Record<string, unknown>[];
  rowCount: number;
}

/** An error as data, with what PostgreSQL said about it. `kind` picks the class the main thread throws. */
export interface PgWireError extends WireError {
  kind: "postgres" | "unavailable" | "usage";
  detail?: string;
  constraint?: string;
}

/** The result of a sent statement that asked to be kept, by its `sendId`. */
export interface SentResult extends QueryResult {
  sendId: number;
}

export type PgReply = Reply<QueryResult | null> & { error?: PgWireError; sent?: SentResult[] };

export type PgEvent =
  | { t: "notification"; channel: string; payload: string }
  /** The LISTEN connection was lost and is back: notifications sent in between were missed. */
  | { t: "listen-reconnected" }
  /** The lock connection broke: the server released every session lock it held. */
  | { t: "locks-lost" }
  | { t: "log"; level: "warn" | "debug"; message: string };

export interface PgWorkerData {
  url: string;
  applicationName: string;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /** Int32Array cell of two: the worker adds one to [REPLIES] after each reply it posts, sets [STARTED] to 1 once running. */
  signal: SharedArrayBuffer;
  replyPort: MessagePort;
}

/** Index in the shared cell (`PgWorkerData.signal`) of the count of replies posted. */
export const REPLIES = 0;
/** Index in the shared cell of the worker's start: 1 once it runs. */
export const STARTED = 1;
