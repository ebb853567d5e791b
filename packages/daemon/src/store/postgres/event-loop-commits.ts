/**
 * Commits awaited on the event loop (SyncPostgres.commitAsync) made by the main thread itself
 * when nothing of their transaction was waited for, nor posted yet: its begin, statements and
 * COMMIT go to the server from here, on connections of this thread, instead of through the
 * worker, which would cost a message and a thread wake-up each way on the append's path. The
 * worker's own code for transactions runs them (worker/transactions.ts): the same pipelining,
 * errors, timeouts and `abandon`. `pg` is loaded on the first such commit.
 */
import { createRequire } from "node:module";
import type pg from "pg";
import { clientConfig, type ClientSettings } from "./worker/client-config.js";
import { toWire } from "./worker/errors.js";
import type { PgReply, PgRequest, TransactionRequest } from "./worker/messages.js";
import { Transactions } from "./worker/transactions.js";

/** This thread's connections (the worker has its own): how many such commits are in flight at once. */
const POOL_SIZE = 4;

type Commit = Extract<PgRequest, { t: "commit" }>;

export class EventLoopCommits {
  private transactions: Transactions | undefined;

  constructor(private readonly settings: ClientSettings) {}

  /**
   * Runs `requests` (the transaction's begin and its sent statements) and `commit`; resolves with
   * the commit's reply as the worker would have posted it (its kept results, or its error).
   */
  commit(requests: readonly TransactionRequest[], commit: Commit): Promise<PgReply> {
    const transactions = this.connections();
    if (!(transactions instanceof Transactions)) return Promise.resolve(this.failed(commit, transactions.error));
    for (const request of requests) {
      if (request.t === "begin") transactions.begin(request);
      else transactions.send(request);
    }
    transactions.started(commit);
    const answered = (answer: PgReply): PgReply => {
      const sent = transactions.finished(commit.requestId);
      if (sent) answer.sent = sent;
      return answer;
    };
    return transactions.end(commit).then(
      (value) => answered({ t: "reply", requestId: commit.requestId, value }),
      (error: unknown) => answered(this.failed(commit, error)),
    );
  }

  /**
   * Runs the one statement of a write transaction that sent nothing else, alone (see
   * SyncPostgres.commitAsync): the server makes it a transaction of its own. Answered as its
   * commit would be, with the statement's rows when it asked to keep them.
   */
  commitAlone(statement: Extract<TransactionRequest, { t: "send" }>, commit: Commit): Promise<PgReply> {
    const transactions = this.connections();
    if (!(transactions instanceof Transactions)) return Promise.resolve(this.failed(commit, transactions.error));
    transactions.started(commit);
    const { text, params, name } = statement;
    const query = name === undefined ? { text, params } : { text, params, name };
    return transactions.query({ t: "query", requestId: commit.requestId, ...query }).then(
      (result): PgReply => {
        transactions.finished(commit.requestId);
        const reply: PgReply = { t: "reply", requestId: commit.requestId, value: null };
        if (statement.keep) reply.sent = [{ sendId: statement.sendId, ...result }];
        return reply;
      },
      (error: unknown) => {
        transactions.finished(commit.requestId);
        return this.failed(commit, error);
      },
    );
  }

  /** Given up waiting for `requestId`: its connection is dropped (the server rolls back what it had not committed). */
  abandon(requestId: number): void {
    this.transactions?.abandon(requestId);
  }

  /** Ends the connections (the caller lets the commits in flight settle first). */
  async close(): Promise<void> {
    const transactions = this.transactions;
    this.transactions = undefined;
    await transactions?.close();
  }

  /** This thread's connections, opened on the first commit; `pg` that could not be loaded is that commit's error. */
  private connections(): Transactions | { error: unknown } {
    try {
      return (this.transactions ??= this.open());
    } catch (error) {
      return { error };
    }
  }

  private failed(commit: Commit, error: unknown): PgReply {
    return { t: "reply", requestId: commit.requestId, error: toWire(error, this.settings.statementTimeoutMs) };
  }

  private open(): Transactions {
    const pgModule = createRequire(import.meta.url)("pg") as typeof pg;
    return new Transactions(pgModule, clientConfig(pgModule, this.settings), POOL_SIZE);
  }
}
