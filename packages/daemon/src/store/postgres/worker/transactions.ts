/**
 * Pooled connections and the transactions pinned to them: the worker's, and the main thread's
 * for the commits it makes itself (../event-loop-commits.ts). Pooled connections run in
 * `pg`'s pipeline mode: the statements of a transaction are written to the server one after the
 * other without waiting for each answer, so a transaction costs one round trip per answer the
 * main thread waits for (messages.ts), not one per statement.
 */
import type pg from "pg";
import { isConnectionError, sqlState, Unavailable, Usage } from "./errors.js";
import { valuesSize } from "./values-size.js";
import type { AnsweredRequest, PgRequest, QueryResult, SentResult, Statement } from "./messages.js";

type Client = pg.PoolClient;
type Config = ConstructorParameters<typeof pg.Pool>[0];

interface Transaction {
  /** Taking a connection and writing BEGIN: what every statement of the transaction comes after. */
  ready: Promise<Client>;
  client: Client | undefined;
  /** Statements sent and not yet waited for, in order. */
  pending: Promise<unknown>[];
  /** Results of sent statements, by the id the main thread gave them, for the ones it may ask about. */
  results: Map<number, Promise<QueryResult>>;
  /** Results to go back with the next answer (statements sent with `keep`). */
  kept: SentResult[];
  /** The first of them that failed, reported by the next answer of the transaction. */
  failure: unknown;
  /** The connection broke (or was dropped) mid-transaction: the server has rolled it back. */
  lost: boolean;
  /** Discard the connection instead of pooling it when the transaction ends. */
  discard: boolean;
}

const LOST = "the connection to PostgreSQL was lost during the transaction; it was rolled back";

interface ClientSocket {
  destroy(): void;
  cork(): void;
  uncork(): void;
  readonly writableCorked: number;
  readonly destroyed: boolean;
  readonly writable: boolean;
}

function socketOf(client: Client | undefined): ClientSocket | undefined {
  return (client as unknown as { connection?: { stream?: ClientSocket } } | undefined)?.connection?.stream;
}

/** Closing the socket fails a stuck query; its connection is then discarded. */
function destroySocket(client: Client | undefined): void {
  socketOf(client)?.destroy();
}

/** The most characters of values a statement has for it to wait in a corked socket (see `submit`). */
const CORKED_MAX_CHARS = 64 * 1024;

/**
 * Runs `statement` on `client`. The driver writes each statement as four messages; what is
 * written to one connection in one turn of the event loop (a transaction's statements, which
 * come in one message: ../sync-postgres.ts) leaves in one system call, as one packet: the
 * socket is corked until the turn's microtasks are done. Only small statements are held so: a
 * large one (an import batch) is written at once, as holding it costs more CPU than the system
 * calls it would save.
 */
function submit(client: Client, statement: string | pg.QueryConfig): Promise<pg.QueryResult> {
  const socket = socketOf(client);
  const small = typeof statement === "string" || valuesSize(statement.values ?? []) <= CORKED_MAX_CHARS;
  if (socket && small && socket.writableCorked === 0) {
    socket.cork();
    process.nextTick(() => socket.uncork());
  } else if (socket && !small) {
    socket.uncork();
  }
  const sent = performance.now();
  const query = typeof statement === "string" ? client.query(statement) : client.query(statement);
  return query.catch((error: unknown) => {
    throw connectionLoss(client, error, sent) ?? error;
  });
}

/**
 * A query's failure as a lost connection (`Unavailable`), told by where it came from rather than
 * by its message: not the server's (no SQLSTATE), on a connection that has ended (its socket
 * closed, or pg takes no more queries on it), or after the client's own wait for the answer ran
 * out (`query_timeout`: the connection is alive but nothing comes back). Undefined otherwise.
 */
function connectionLoss(client: Client, error: unknown, sentMs: number): Unavailable | undefined {
  if (error instanceof Unavailable || sqlState(error) !== undefined) return undefined;
  const socket = socketOf(client);
  const ended = socket === undefined || socket.destroyed || !socket.writable || isDead(client);
  const waitMs = (client as unknown as { connectionParameters?: { query_timeout?: number } }).connectionParameters?.query_timeout;
  const unanswered = waitMs !== undefined && waitMs > 0 && performance.now() - sentMs >= waitMs;
  if (!ended && !unanswered) return undefined;
  return new Unavailable(error instanceof Error ? error.message : String(error), (error as { code?: unknown } | null)?.code);
}

/** A pooled connection that has already seen its end (e.g. the server's FATAL on shutdown). */
function isDead(client: Client): boolean {
  const state = client as unknown as { _queryable?: boolean; _ending?: boolean; _connectionError?: boolean };
  return state._queryable === false || state._ending === true || state._connectionError === true;
}

function release(client: Client, discard: boolean): void {
  try {
    client.release(discard ? true : undefined);
  } catch {
    // released already (abandon raced with the end of the request)
  }
}

function toResult(result: pg.QueryResult): QueryResult {
  return { rows: result.rows, rowCount: result.rowCount ?? 0 };
}

function statementConfig(statement: Statement) {
  const values = statement.params.map((value) => (typeof value === "bigint" ? value.toString() : value));
  return statement.name ? { name: statement.name, text: statement.text, values } : { text: statement.text, values };
}

export class Transactions {
  private readonly pool: pg.Pool;
  private readonly transactions = new Map<number, Transaction>();
  /** Kept results that go with the answer to a request (main.ts attaches them to the reply). */
  private readonly outbox = new Map<number, SentResult[]>();
  /** Answered requests in progress, and the connection each runs on (to drop it on `abandon`). */
  private readonly inProgress = new Map<number, { client?: Client; txId?: number; abandoned: boolean }>();

  /** `poolSize`: connections of the pool (LISTEN and the session locks have one each besides). */
  constructor(pgModule: typeof pg, config: Config, poolSize: number) {
    const options = { ...config, pipeline: true, max: poolSize, idleTimeoutMillis: 30_000, allowExitOnIdle: true };
    this.pool = new pgModule.Pool(options as Config);
    // An idle pooled connection that breaks (server restart) is dropped by the pool; this only keeps
    // the 'error' event from being fatal.
    this.pool.on("error", () => {});
    // A write transaction begins READ COMMITTED; one sent as its lone statement, without BEGIN
    // (../sync-postgres.ts), runs at the connection's default: made the same, whatever the
    // server's. Written before anything else on the connection (pipelined: not waited for).
    this.pool.on("connect", (client) => {
      client.query("SET default_transaction_isolation = 'read committed'").catch(() => {});
    });
  }

  started(request: AnsweredRequest): void {
    const state: { txId?: number; abandoned: boolean } = { abandoned: false };
    if ("txId" in request && request.txId !== undefined) state.txId = request.txId;
    this.inProgress.set(request.requestId, state);
  }

  /** Done with `requestId`: the kept results that go with its answer. */
  finished(requestId: number): SentResult[] | undefined {
    this.inProgress.delete(requestId);
    const sent = this.outbox.get(requestId);
    this.outbox.delete(requestId);
    return sent;
  }

  /** The main thread gave up on `requestId`: its connection is dropped (a transaction on it is lost). */
  abandon(requestId: number): void {
    const state = this.inProgress.get(requestId);
    if (!state) return;
    state.abandoned = true;
    const tx = state.txId === undefined ? undefined : this.transactions.get(state.txId);
    destroySocket(state.client ?? tx?.client);
  }

  connect(requestId: number): Promise<null> {
    return this.outside(requestId, async () => null);
  }

  query(request: Extract<PgRequest, { t: "query" }>): Promise<QueryResult> {
    const work = (client: Client) => submit(client, statementConfig(request)).then(toResult);
    if (request.txId !== undefined) return this.inside(request.requestId, request.txId, work);
    const run = () => this.outside(request.requestId, work);
    return run().catch((error) => {
      // "cached plan must not change result type": a table this prepared statement reads was
      // altered. Its connection was dropped; outside a transaction one retry re-prepares it.
      if (sqlState(error) === "0A000" && request.name) return run();
      throw error;
    });
  }

  exec(request: Extract<PgRequest, { t: "exec" }>): Promise<null> {
    const work = (client: Client) => submit(client, request.script).then(() => null);
    return request.txId !== undefined ? this.inside(request.requestId, request.txId, work) : this.outside(request.requestId, work);
  }

  /** Takes a connection and writes BEGIN, without waiting: a failure is the transaction's next answer. */
  begin(request: Extract<PgRequest, { t: "begin" }>): void {
    const sql = request.mode === "read" ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN ISOLATION LEVEL READ COMMITTED";
    const tx: Transaction = {
      ready: undefined as never,
      client: undefined,
      pending: [],
      results: new Map(),
      kept: [],
      failure: undefined,
      lost: false,
      discard: false,
    };
    tx.ready = this.acquire().then((client) => {
      tx.client = client;
      this.track(tx, submit(client, sql));
      return client;
    });
    // A failure to connect is reported by the transaction's next answer.
    tx.ready.catch(() => {});
    this.transactions.set(request.txId, tx);
  }

  /** A statement of the transaction whose answer nobody waits for. */
  send(request: Extract<PgRequest, { t: "send" }>): void {
    const tx = this.transactions.get(request.txId);
    if (!tx) return; // ended already: its end reported what it had to
    tx.ready.then((client) => {
      if (tx.lost || tx.client !== client) return;
      const query = submit(client, statementConfig(request)).then(toResult);
      tx.results.set(request.sendId, query);
      this.track(tx, query, request.keep ? (result) => tx.kept.push({ sendId: request.sendId, ...result }) : undefined);
    }, () => {});
  }

  /** The result of a statement sent earlier in the transaction. */
  result(request: Extract<PgRequest, { t: "result" }>): Promise<QueryResult> {
    return this.inside(request.requestId, request.txId, async () => {
      const tx = this.transactions.get(request.txId);
      const result = await tx?.results.get(request.sendId);
      tx?.results.delete(request.sendId);
      return result ?? { rows: [], rowCount: 0 };
    });
  }

  async end(request: Extract<PgRequest, { t: "commit" | "rollback" }>): Promise<null> {
    const tx = this.transactions.get(request.txId);
    if (!tx) throw new Usage("no such transaction (it was never begun, or has ended)");
    const command = request.t === "commit" ? "COMMIT" : "ROLLBACK";
    let result: pg.QueryResult;
    try {
      // A rollback does not report what failed before it: that is why it is rolled back.
      result = await this.inside(request.requestId, request.txId, (client) => submit(client, command), request.t === "commit");
    } catch (error) {
      // The server rolled it back when the connection went: a rollback has nothing left to do.
      if (request.t === "rollback" && (tx.lost || isConnectionError(error))) return null;
      if (request.t === "rollback") throw error;
      // A statement of it failed (reported here) or the COMMIT did: the transaction is over either
      // way (PostgreSQL answers the COMMIT of a failed transaction with a rollback).
      throw error;
    } finally {
      this.transactions.delete(request.txId);
      if (tx.client) release(tx.client, tx.discard || tx.lost);
    }
    // COMMIT of a transaction in which a statement failed ends it with a rollback, without error.
    if (request.t === "commit" && result.command === "ROLLBACK") {
      throw Object.assign(new Error("the transaction was rolled back, not committed: a statement in it had failed"), { code: "25P02" });
    }
    return null;
  }

  /** Ends a read transaction: its COMMIT is written, and the connection pooled once it is answered. */
  release(txId: number): void {
    const tx = this.transactions.get(txId);
    if (!tx) return;
    this.transactions.delete(txId);
    tx.ready.then(
      (client) => {
        if (tx.lost || tx.client !== client) return;
        submit(client, "COMMIT").then(
          () => release(client, tx.discard),
          () => release(client, true),
        );
      },
      () => {},
    );
  }

  async close(): Promise<void> {
    for (const tx of this.transactions.values()) if (tx.client) release(tx.client, true);
    this.transactions.clear();
    await this.pool.end().catch(() => {});
  }

  private track<T>(tx: Transaction, query: Promise<T>, onResult?: (result: T) => void): void {
    const settled = query.then(onResult, (error) => {
      tx.failure ??= error;
      this.noteFailure(tx, error);
    });
    tx.pending.push(settled);
  }

  private noteFailure(tx: Transaction, error: unknown): void {
    if (isConnectionError(error)) {
      tx.lost = true;
      if (tx.client) release(tx.client, true);
    } else if (sqlState(error) === "0A000") {
      tx.discard = true; // a cached plan that no longer fits (schema changed): start afresh
    }
  }

  /**
   * Runs `work` on the transaction's connection after what was sent before it, and answers with
   * the first failure among those when there was one (then forgotten: a ROLLBACK TO SAVEPOINT may
   * have made the transaction usable again).
   */
  private async inside<T>(requestId: number, txId: number, work: (client: Client) => Promise<T>, reportEarlier = true): Promise<T> {
    const tx = this.transactions.get(txId);
    if (!tx) throw new Usage("no such transaction (it was never begun, or has ended)");
    let client: Client;
    try {
      client = await tx.ready;
    } catch (error) {
      tx.lost = true;
      throw error;
    }
    if (tx.lost || tx.client !== client) throw new Unavailable(LOST);
    const state = this.inProgress.get(requestId);
    if (state) state.client = client;
    if (state?.abandoned) destroySocket(client);
    const pending = tx.pending;
    tx.pending = [];
    const running = work(client);
    running.catch(() => {}); // its failure is reported below, after the earlier ones
    await Promise.all(pending);
    if (tx.kept.length > 0) {
      this.outbox.set(requestId, tx.kept);
      tx.kept = [];
    }
    const earlier = reportEarlier ? tx.failure : undefined;
    tx.failure = undefined;
    try {
      const result = await running;
      if (earlier !== undefined) throw earlier;
      return result;
    } catch (error) {
      if (earlier === undefined) this.noteFailure(tx, error);
      if (tx.lost) throw earlier !== undefined && !isConnectionError(earlier) ? earlier : new Unavailable(LOST, sqlState(error));
      throw earlier ?? error;
    }
  }

  /** Runs `work` on a pooled connection (returned after). */
  private async outside<T>(requestId: number, work: (client: Client) => Promise<T>): Promise<T> {
    const client = await this.acquire();
    const state = this.inProgress.get(requestId);
    if (state?.abandoned) {
      release(client, true);
      throw new Unavailable("the request was abandoned");
    }
    if (state) state.client = client;
    try {
      const result = await work(client);
      release(client, false);
      return result;
    } catch (error) {
      release(client, isConnectionError(error) || sqlState(error) === "0A000");
      throw error;
    }
  }

  private async acquire(): Promise<Client> {
    let client: Client;
    for (let attempt = 1; ; attempt++) {
      try {
        client = await this.pool.connect();
      } catch (error) {
        throw new Unavailable(`cannot connect to PostgreSQL: ${(error as Error).message}`, (error as { code?: unknown }).code);
      }
      // Nothing was sent on a dead connection yet: taking another one is safe.
      if (!isDead(client) || attempt > 4) break;
      client.release(true);
    }
    const guarded = client as unknown as { bridgeGuarded?: boolean };
    if (!guarded.bridgeGuarded) {
      // Keeps a checked-out connection's 'error' event from being fatal; the running query fails by itself.
      guarded.bridgeGuarded = true;
      client.on("error", () => {});
    }
    return client;
  }
}
