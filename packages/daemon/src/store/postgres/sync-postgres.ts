/**
 * PostgreSQL behind a synchronous API, so the store keeps the synchronous contract it has on
 * SQLite (docs/architecture.md#postgresql-behind-a-synchronous-store). A worker thread owns the
 * `pg` Pool (worker/main.ts); each call posts a request to it and blocks the main thread with
 * `Atomics.wait` until the worker has posted the reply on a dedicated port, which is then read
 * with `receiveMessageOnPort`, the way better-sqlite3 blocks the thread on disk I/O. One call
 * does not block: `commitAsync`, whose answer comes on the event loop (for a transaction that
 * waited for nothing, sent by this thread itself: event-loop-commits.ts).
 *
 * - No call can hang the daemon: the wait is bounded (connect timeout + statement timeout + a
 *   margin). A call that runs out of time throws `PostgresUnavailableError` and its connection is
 *   dropped in the worker.
 * - A lost connection (server restarted or killed, network down) fails the call that met it with
 *   `PostgresUnavailableError`; the broken connection is discarded and the next call connects anew.
 *   A transaction whose connection was lost is over (the server rolled it back): `rollback()` ends
 *   it quietly, `commit()` throws.
 * - An error reported by the server is a `PostgresError` with its SQLSTATE `code`.
 * - A transaction pins one pooled connection in the worker until `commit()`/`rollback()`. Its
 *   statements are pipelined: `begin()` and `send()` do not wait, so a transaction costs one
 *   round trip per call that needs an answer (`traffic` counts them).
 * - The worker never keeps the process alive (it is unref'd), and its output is captured and
 *   discarded: nothing it or `pg` prints can reach the daemon's stdout (the protocol).
 */
import type { MessagePort, Worker } from "node:worker_threads";
import { StoreUnavailableError } from "../../errors.js";
import { workerThreads } from "../../lazy-node.js";
import { log } from "../../log.js";
import { startWorker } from "../../workers/start-worker.js";
import { EventLoopCommits } from "./event-loop-commits.js";
import { valuesSize } from "./worker/values-size.js";
import {
  REPLIES,
  STARTED,
  type PgEvent,
  type PgReply,
  type PgRequest,
  type PgWireError,
  type PgWorkerData,
  type QueryResult,
  type TransactionRequest,
} from "./worker/messages.js";

export interface SyncPostgresOptions {
  /** How long connecting may take (default 5000 ms). */
  connectTimeoutMs?: number;
  /** The server cancels a statement that runs longer (default 30000 ms). */
  statementTimeoutMs?: number;
  /** What the server shows in pg_stat_activity (default "base-context"). */
  applicationName?: string;
}

export interface ListenOptions {
  /**
   * Called when the LISTEN connection was lost and is back: notifications sent in between were
   * missed, so whatever they keep fresh must be refreshed.
   */
  onReconnect?: () => void;
}

/** An error PostgreSQL reported for a statement (constraint violation, syntax, statement timeout, …). */
export class PostgresError extends Error {
  /** The SQLSTATE (e.g. "23505" unique violation, "57014" canceled by the statement timeout). */
  readonly code: string;
  declare readonly detail?: string;
  /** The constraint that was violated, when there is one. */
  declare readonly constraint?: string;

  constructor(message: string, code: string, detail?: string, constraint?: string) {
    super(message);
    this.name = "PostgresError";
    this.code = code;
    if (detail !== undefined) this.detail = detail;
    if (constraint !== undefined) this.constraint = constraint;
  }
}

/** PostgreSQL cannot be reached: cannot connect, connection lost, or no answer in time. */
export class PostgresUnavailableError extends StoreUnavailableError {
  constructor(message: string, code?: string) {
    super(message, code);
    this.name = "PostgresUnavailableError";
  }
}

/** A statement sent without waiting (`SyncPostgres.send`): reading its result may wait for it. */
export interface SentStatement {
  readonly changes: number;
  readonly rows: Record<string, unknown>[];
}

/** What crossed to the server: statements, and the waits for an answer (each one round trip). */
export interface PostgresTraffic {
  statements: number;
  roundTrips: number;
}

const DEFAULTS = { connectTimeoutMs: 5000, statementTimeoutMs: 30_000, applicationName: "base-context" };
/** How much longer than the worker's own timeouts the main thread waits before giving up on it. */
const WAIT_MARGIN_MS = 2000;
/**
 * How long a call waits for a new worker thread to start (load its code) before its own bound
 * begins. Starting is work of this machine's CPU, not a wait on the server, so the call's bound
 * does not cover it; this only ends the wait for a worker that failed to start.
 */
const WORKER_START_WAIT_MS = 60_000;
/** The most characters of values a commit made on this thread sends (SyncPostgres.takeQueued). */
const EVENT_LOOP_COMMIT_MAX_CHARS = 64 * 1024;
/** How long close() waits for the worker to end its connections before stopping it. */
const CLOSE_WAIT_MS = 5000;

type Request = PgRequest extends infer R ? (R extends { requestId: number } ? Omit<R, "requestId"> : never) : never;

export class SyncPostgres {
  private worker: Worker | undefined;
  private replies: MessagePort | undefined;
  /** [REPLIES]: bumped by the worker after each reply; [STARTED]: 1 once the worker runs (worker/messages.ts). */
  private readonly cell = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
  private nextRequestId = 1;
  private nextTxId = 1;
  private nextSendId = 1;
  /**
   * The open transaction's sent statements whose results come back with a later answer, and
   * those that came: one pair per transaction, so results that a commit not waited for
   * (`commitAsync`) brings back land in its own transaction's, after another has begun.
   */
  private sent: SentResults = newSentResults();
  /** Requests not posted yet (`post`). */
  private outgoing: PgRequest[] = [];
  private eventLoopCommitsMade: EventLoopCommits | undefined;
  /** Answers not waited for (`commitAsync`), by requestId: they come on the event loop. */
  private readonly awaited = new Map<number, AwaitedAnswer>();
  /** The commits not waited for that have not settled yet: close() lets them finish first. */
  private readonly commits = new Set<Promise<void>>();
  private statements = 0;
  private roundTrips = 0;
  private txId: number | undefined;
  /** The open transaction died with the worker that held its connection. */
  private txLost = false;
  private closed = false;
  private readonly listeners = new Map<string, Set<{ deliver: (payload: string) => void; options: ListenOptions }>>();
  /** Session locks held (tryLockSession), and who hears of their loss. */
  private sessionLocks = 0;
  private readonly locksLost = new Set<() => void>();
  private readonly settings: Required<SyncPostgresOptions>;
  /** Called before each statement goes out: what is buffered to go before it is sent (row-batches.ts). */
  beforeStatement: (() => void) | undefined;
  /** Called when a transaction begins or is rolled back: what was buffered for it is dropped. */
  onTransactionEnd: (() => void) | undefined;
  /** The longest a call waits for the worker. */
  private readonly waitMs: number;

  private constructor(
    private readonly url: string,
    options: SyncPostgresOptions,
  ) {
    this.settings = { ...DEFAULTS, ...definedOnly(options) };
    for (const key of ["connectTimeoutMs", "statementTimeoutMs"] as const) {
      // Zero would mean "no timeout" to PostgreSQL: a call that can wait forever is what the bound is for.
      const value = this.settings[key];
      if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${key} must be a positive number of milliseconds, not ${value}`);
    }
    this.waitMs = this.settings.connectTimeoutMs + this.settings.statementTimeoutMs + WAIT_MARGIN_MS;
  }

  /** Starts the worker and connects once, so a wrong URL or a server that is down fails here. */
  static open(url: string, options: SyncPostgresOptions = {}): SyncPostgres {
    const postgres = new SyncPostgres(url, options);
    try {
      postgres.call({ t: "connect" });
    } catch (error) {
      void postgres.close();
      throw error;
    }
    return postgres;
  }

  get inTransaction(): boolean {
    return this.txId !== undefined;
  }

  /** Runs one statement with `$n` placeholders; `name` makes it a prepared statement (prepared once per connection). */
  query<Row = Record<string, unknown>>(text: string, params: readonly unknown[] = [], name?: string): { rows: Row[]; rowCount: number } {
    this.assertTransactionAlive();
    this.beforeStatement?.();
    const request: Request = { t: "query", text, params: [...params] };
    if (name !== undefined) request.name = name;
    if (this.txId !== undefined) request.txId = this.txId;
    this.statements++;
    const result = this.call(request) as QueryResult;
    return result as { rows: Row[]; rowCount: number };
  }

  /** Runs a script of statements without parameters (migrations). */
  exec(script: string): void {
    this.assertTransactionAlive();
    this.beforeStatement?.();
    const request: Request = { t: "exec", script };
    if (this.txId !== undefined) request.txId = this.txId;
    this.statements++;
    this.call(request);
  }

  /**
   * Begins a transaction on a connection pinned until commit/rollback. "read" is REPEATABLE READ
   * READ ONLY: every statement sees one snapshot. "write" is READ COMMITTED (writers serialise on
   * advisory locks). Nothing is waited for: the BEGIN goes to the server with the transaction's
   * first statement that is, and a failure to connect is that statement's error.
   */
  begin(mode: "read" | "write"): void {
    if (this.txId !== undefined) throw new Error("a PostgreSQL transaction is already open on this connection");
    if (this.closed) throw new Error("the PostgreSQL connection is closed");
    this.onTransactionEnd?.();
    const txId = this.nextTxId++;
    this.sent = newSentResults();
    this.statements++;
    this.ensureWorker();
    this.post({ t: "begin", txId, mode });
    this.txId = txId;
    this.txLost = false;
  }

  /**
   * Sends a statement of the open transaction without waiting for its answer: it is pipelined
   * behind what was sent before, and a failure is thrown by the transaction's next call that
   * waits (a query, the commit). Reading the result's `changes` or `rows` gives what the
   * statement answered: with `keep`, its rows come back with the transaction's next answer (the
   * commit's included), so reading them after that costs nothing; otherwise, or before that, the
   * read waits for the statement (one round trip).
   */
  send(text: string, params: readonly unknown[] = [], name?: string, keep = false): SentStatement {
    const txId = this.txId;
    if (txId === undefined) throw new Error("send() needs an open transaction: use query()");
    this.assertTransactionAlive();
    this.beforeStatement?.();
    const sendId = this.nextSendId++;
    const request: PgRequest = { t: "send", txId, sendId, text, params: [...params] };
    if (name !== undefined) request.name = name;
    const sent = this.sent;
    if (keep) {
      request.keep = true;
      sent.kept.add(sendId);
    }
    this.statements++;
    this.ensureWorker();
    this.post(request);
    let result: QueryResult | undefined;
    const get = (): QueryResult => (result ??= this.sentResult(txId, sendId, sent));
    return {
      get changes() {
        return get().rowCount;
      },
      get rows() {
        return get().rows;
      },
    };
  }

  private sentResult(txId: number, sendId: number, sent: SentResults): QueryResult {
    const arrived = sent.results.get(sendId);
    if (arrived) {
      sent.results.delete(sendId);
      sent.kept.delete(sendId);
      return arrived;
    }
    if (this.txId !== txId) {
      // Ended without its result: the statement failed (the commit said so) or was rolled back.
      throw new Error("the transaction of this statement ended before its result was read");
    }
    sent.kept.delete(sendId);
    return this.call({ t: "result", txId, sendId })!;
  }

  /** Statements sent and round trips waited for since this bridge opened (the debug log's and the tests' measure). */
  get traffic(): PostgresTraffic {
    return { statements: this.statements, roundTrips: this.roundTrips };
  }

  /** Commits; the transaction is over whether this succeeds or throws. */
  commit(): void {
    this.end("commit");
  }

  /**
   * Commits without blocking the thread: what the transaction sent goes out with the COMMIT at
   * once, and the promise settles on the event loop when the server has answered, the
   * transaction's kept results with it (a sent statement's result is readable after that). From
   * the call on, the transaction is over for this thread: another may begin while the server
   * commits this one, on another pooled connection. A transaction none of whose requests has
   * been posted yet, and which is small, is sent by this thread on its own connections
   * (`takeQueued`, EventLoopCommits); any other is committed by the worker. Of the former, one
   * that is a single statement (`loneStatement`: an append) goes without BEGIN and COMMIT.
   * Bounded like every call: no answer in time rejects with PostgresUnavailableError (the
   * connection is dropped, so the server rolls it back unless the COMMIT had already been
   * applied, as after any lost answer).
   */
  commitAsync(): Promise<void> {
    const txId = this.txId;
    if (txId === undefined) return Promise.reject(new Error("cannot commit: no PostgreSQL transaction is open"));
    if (this.txLost) {
      this.onTransactionEnd?.();
      this.txId = undefined;
      this.txLost = false;
      return Promise.reject(new PostgresUnavailableError("the PostgreSQL worker stopped during the transaction; it was rolled back"));
    }
    this.beforeStatement?.();
    this.txId = undefined;
    this.roundTrips++;
    const requestId = this.nextRequestId++;
    const sent = this.sent;
    const queued = this.takeQueued(txId);
    const alone = queued && loneStatement(queued);
    // A COMMIT is sent; a lone statement goes without it and without the BEGIN counted when it was queued.
    this.statements += alone ? -1 : 1;
    const answered = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.awaited.delete(requestId)) return;
        this.settledAwaited();
        if (queued) this.eventLoopCommits.abandon(requestId);
        else this.post({ t: "abandon", requestId }, true);
        reject(new PostgresUnavailableError(`PostgreSQL did not answer within ${Math.round(this.waitMs)} ms`));
      }, this.waitMs);
      timer.unref();
      this.awaited.set(requestId, {
        viaWorker: !queued,
        settle: (reply) => {
          clearTimeout(timer);
          if (!reply) return reject(new PostgresUnavailableError("the PostgreSQL worker stopped during the transaction's commit"));
          for (const result of reply.sent ?? []) if (sent.kept.has(result.sendId)) sent.results.set(result.sendId, result);
          try {
            unwrap(reply);
            resolve();
          } catch (error) {
            reject(error as Error);
          }
        },
      });
      const commit = { t: "commit", txId, requestId, onEventLoop: true } as const;
      if (queued) {
        const made = alone ? this.eventLoopCommits.commitAlone(alone, commit) : this.eventLoopCommits.commit(queued, commit);
        void made.then((reply) => this.onEvent(reply));
        return;
      }
      // An answer awaited on the event loop keeps the process alive until it comes.
      this.ensureWorker().ref();
      this.post(commit);
    });
    const pending = answered.then(
      () => undefined,
      () => undefined,
    );
    this.commits.add(pending);
    void pending.then(() => this.commits.delete(pending));
    return answered;
  }

  /** This thread's own connections for commits awaited on the event loop, opened on the first one. */
  private get eventLoopCommits(): EventLoopCommits {
    return (this.eventLoopCommitsMade ??= new EventLoopCommits({ url: this.url, ...this.settings }));
  }

  /** After an awaited answer came (or was given up): the worker no longer keeps the process alive once none is left. */
  private settledAwaited(): void {
    if (this.awaited.size === 0) this.worker?.unref();
  }

  /** Rolls back; the transaction is over whether this succeeds or throws. */
  rollback(): void {
    this.end("rollback");
  }

  /**
   * Ends a read transaction without waiting for its COMMIT: a READ ONLY transaction has nothing
   * to commit that could fail, and its connection goes back to the pool once the server answers.
   */
  release(): void {
    const txId = this.txId;
    if (txId === undefined) throw new Error("cannot release: no PostgreSQL transaction is open");
    this.txId = undefined;
    this.txLost = false;
    this.statements++;
    this.post({ t: "release", txId });
  }

  /**
   * LISTEN on `channel` (on a dedicated connection, reconnected after a loss); `listener` gets each
   * notification's payload on the event loop. Returns once the server listens, so a notification
   * sent after that is delivered.
   */
  listen(channel: string, listener: (payload: string) => void, options: ListenOptions = {}): { dispose(): void } {
    const entry = { deliver: listener, options };
    let set = this.listeners.get(channel);
    if (!set) {
      this.call({ t: "listen", channel });
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(entry);
    const listeners = set;
    return {
      dispose: () => {
        if (!listeners.delete(entry) || listeners.size > 0 || this.listeners.get(channel) !== listeners) return;
        this.listeners.delete(channel);
        if (!this.closed) this.post({ t: "unlisten", channel });
      },
    };
  }

  /**
   * Takes a session-level advisory lock (two-key form) on a connection of its own that stays open
   * while any such lock is held: state that must last exactly as long as this process, such as a
   * daemon's lease (postgres/lease.ts). False when another session holds it. If that connection
   * breaks (or the worker ends), the server has released the locks and `onSessionLocksLost`
   * listeners hear of it on the event loop; the connection is not reopened behind their back.
   */
  tryLockSession(space: number, key: number): boolean {
    const result = this.call({ t: "lock", space, key }) as QueryResult;
    if (result.rows[0]?.done !== true) return false;
    this.sessionLocks++;
    return true;
  }

  /** Releases a lock taken with tryLockSession; false when it was not held. */
  unlockSession(space: number, key: number): boolean {
    const released = (this.call({ t: "unlock", space, key }) as QueryResult).rows[0]?.done === true;
    if (released) this.sessionLocks--;
    return released;
  }

  /** Calls `listener` when the session locks are lost with their connection. */
  onSessionLocksLost(listener: () => void): { dispose(): void } {
    this.locksLost.add(listener);
    return { dispose: () => void this.locksLost.delete(listener) };
  }

  /** Ends every connection and the worker. Calls after this throw. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Commits already sent are answered before the connections end (each is bounded by waitMs).
    while (this.commits.size > 0) await Promise.all([...this.commits]);
    this.closed = true;
    this.txId = undefined;
    this.listeners.clear();
    this.postOutgoing();
    const worker = this.worker;
    this.worker = undefined;
    this.replies?.close();
    await this.eventLoopCommitsMade?.close();
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    // An awaited close() settles even when nothing else keeps the event loop running.
    worker.ref();
    worker.postMessage({ t: "close" } satisfies PgRequest);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), CLOSE_WAIT_MS)));
    if ((await Promise.race([exited, timeout])) === "timeout") await worker.terminate();
    clearTimeout(timer);
    this.failAwaited();
  }

  private end(how: "commit" | "rollback"): void {
    const txId = this.txId;
    if (txId === undefined) throw new Error(`cannot ${how}: no PostgreSQL transaction is open`);
    if (how === "commit" && !this.txLost) this.beforeStatement?.();
    else this.onTransactionEnd?.();
    this.txId = undefined;
    if (this.txLost) {
      this.txLost = false;
      if (how === "rollback") return;
      throw new PostgresUnavailableError("the PostgreSQL worker stopped during the transaction; it was rolled back");
    }
    this.statements++;
    this.call({ t: how, txId });
  }

  private assertTransactionAlive(): void {
    if (this.txLost) throw new PostgresUnavailableError("the PostgreSQL worker stopped during the transaction; it was rolled back");
  }

  /**
   * Requests made in one synchronous run of this thread (a transaction's begin, statements and
   * commit) go to the worker as one message, posted at the end of the run (a microtask), or at
   * once with `now` (before anything is waited for): the worker then handles them in one turn
   * and writes them to the server together (worker/transactions.ts), and neither thread pays a
   * message and a wake-up per statement. Order is kept: what is queued goes out before `now`'s.
   */
  private post(request: PgRequest, now = false): void {
    this.outgoing.push(request);
    if (now) this.postOutgoing();
    else if (this.outgoing.length === 1) queueMicrotask(() => this.postOutgoing());
  }

  /**
   * The open transaction's requests, taken out of the queue, when none of them has been posted
   * yet (its begin is still queued, and nothing of it was waited for) and they are small:
   * commitAsync then makes the commit on this thread (EventLoopCommits). A large one (an import
   * batch) goes to the worker, which turns its values into the wire format while this thread
   * reads on.
   */
  private takeQueued(txId: number): TransactionRequest[] | undefined {
    const at = this.outgoing.findIndex((request) => request.t === "begin" && request.txId === txId);
    if (at < 0) return undefined;
    const mine: TransactionRequest[] = [];
    let size = 0;
    for (const request of this.outgoing.slice(at)) {
      if ((request.t !== "begin" && request.t !== "send") || request.txId !== txId) return undefined;
      if (request.t === "send") size += valuesSize(request.params);
      mine.push(request);
    }
    if (size > EVENT_LOOP_COMMIT_MAX_CHARS) return undefined;
    this.outgoing = this.outgoing.slice(0, at);
    return mine;
  }

  /** Posts what is queued. Without a worker it is dropped: it belonged to transactions that died with the last one. */
  private postOutgoing(): void {
    const requests = this.outgoing;
    if (requests.length === 0) return;
    this.outgoing = [];
    this.worker?.postMessage(requests.length === 1 ? requests[0] : requests);
  }

  private ensureWorker(): Worker {
    return this.worker ?? this.startWorker();
  }

  private startWorker(): Worker {
    const { MessageChannel } = workerThreads();
    const channel = new MessageChannel();
    const data: PgWorkerData = {
      url: this.url,
      applicationName: this.settings.applicationName,
      connectTimeoutMs: this.settings.connectTimeoutMs,
      statementTimeoutMs: this.settings.statementTimeoutMs,
      signal: this.cell.buffer as SharedArrayBuffer,
      replyPort: channel.port2,
    };
    Atomics.store(this.cell, STARTED, 0);
    const worker = startWorker("postgres", { data, transferList: [data.replyPort] });
    worker.on("message", (event: PgEvent | PgReply) => this.onEvent(event));
    worker.on("error", (error) => log("warn", `the PostgreSQL worker failed: ${error.message}`));
    worker.on("exit", (code) => {
      if (this.worker !== worker) return;
      log("warn", `the PostgreSQL worker stopped (exit code ${code}); the next call starts another`);
      // The next call starts a new worker (and connects anew); an open transaction died with it.
      this.worker = undefined;
      this.replies?.close();
      this.replies = undefined;
      if (this.txId !== undefined) this.txLost = true;
      this.failAwaited();
      this.relisten();
      if (!this.closed) this.lostSessionLocks();
    });
    worker.unref();
    channel.port1.unref();
    this.worker = worker;
    this.replies = channel.port1;
    return worker;
  }

  /** After the worker was replaced: LISTEN again, and tell the listeners they may have missed notifications. */
  private relisten(): void {
    if (this.closed || this.listeners.size === 0) return;
    try {
      for (const channel of this.listeners.keys()) this.call({ t: "listen", channel });
      this.onEvent({ t: "listen-reconnected" });
    } catch (error) {
      log("warn", `could not LISTEN again after the PostgreSQL worker stopped: ${(error as Error).message}`);
    }
  }

  /** The worker that was to answer them is gone: the commits not waited for fail (the server rolled back what it had not committed). */
  private failAwaited(): void {
    for (const [requestId, answer] of [...this.awaited]) {
      if (!answer.viaWorker) continue;
      this.awaited.delete(requestId);
      answer.settle(undefined);
    }
  }

  private onEvent(event: PgEvent | PgReply): void {
    if (event.t === "reply") {
      const answer = this.awaited.get(event.requestId);
      if (!answer) return; // given up on already
      this.awaited.delete(event.requestId);
      this.settledAwaited();
      answer.settle(event);
      return;
    }
    if (event.t === "notification") {
      for (const entry of this.listeners.get(event.channel) ?? []) {
        try {
          entry.deliver(event.payload);
        } catch (error) {
          log("warn", `a PostgreSQL notification listener on "${event.channel}" failed: ${(error as Error).message}`);
        }
      }
    } else if (event.t === "locks-lost") {
      this.lostSessionLocks();
    } else if (event.t === "listen-reconnected") {
      log("debug", "the PostgreSQL LISTEN connection is back");
      for (const set of this.listeners.values()) for (const entry of set) entry.options.onReconnect?.();
    } else {
      log(event.level, event.message);
    }
  }

  private lostSessionLocks(): void {
    if (this.sessionLocks === 0) return;
    this.sessionLocks = 0;
    log("warn", "the PostgreSQL connection holding this daemon's session locks was lost");
    for (const listener of [...this.locksLost]) {
      try {
        listener();
      } catch (error) {
        log("warn", `a session-lock loss listener failed: ${(error as Error).message}`);
      }
    }
  }

  /** Posts a request and blocks until its reply (or until the bounded wait runs out). */
  private call(request: Request): QueryResult | null {
    if (this.closed) throw new Error("the PostgreSQL connection is closed");
    this.ensureWorker();
    const replies = this.replies!;
    this.roundTrips++;
    const { receiveMessageOnPort } = workerThreads();
    const requestId = this.nextRequestId++;
    this.post({ ...request, requestId } as PgRequest, true);
    this.waitForWorkerStart();
    const deadline = performance.now() + this.waitMs;
    for (;;) {
      // The worker posts a reply, then bumps the cell: a reply posted after `seen` was read wakes the wait.
      const seen = Atomics.load(this.cell, REPLIES);
      for (let received = receiveMessageOnPort(replies); received; received = receiveMessageOnPort(replies)) {
        const reply = received.message as PgReply;
        // Replies to requests given up on earlier arrive late and are dropped here.
        if (reply.requestId !== requestId) continue;
        for (const sent of reply.sent ?? []) if (this.sent.kept.has(sent.sendId)) this.sent.results.set(sent.sendId, sent);
        return unwrap(reply);
      }
      const left = deadline - performance.now();
      if (left <= 0) break;
      Atomics.wait(this.cell, REPLIES, seen, left);
    }
    this.post({ t: "abandon", requestId }, true);
    // The worker drops the connection the request ran on: an open transaction is then lost, and
    // the caller's rollback() ends it.
    throw new PostgresUnavailableError(`PostgreSQL did not answer within ${Math.round(this.waitMs)} ms`);
  }

  /**
   * Blocks until the worker thread runs. A call's bound is for the worker's connecting and the
   * server's answer; on a loaded machine a new thread's start (its code loaded and compiled) can
   * alone take longer than a short bound, and counting it made the first call of a healthy
   * bridge fail.
   */
  private waitForWorkerStart(): void {
    const deadline = performance.now() + WORKER_START_WAIT_MS;
    while (Atomics.load(this.cell, STARTED) === 0) {
      const left = deadline - performance.now();
      if (left <= 0) throw new PostgresUnavailableError(`the PostgreSQL worker did not start within ${WORKER_START_WAIT_MS} ms`);
      Atomics.wait(this.cell, STARTED, 0, left);
    }
  }
}

/** Results of a transaction's statements sent with `keep`: those asked for, and those that came. */
interface SentResults {
  readonly kept: Set<number>;
  readonly results: Map<number, QueryResult>;
}

/**
 * The statement of a write transaction that is that statement and nothing else (its begin, one
 * send). Sent alone, the server runs it as a transaction of its own: the same work at the same
 * isolation (READ COMMITTED, the default of this daemon's connections: worker/transactions.ts),
 * without a BEGIN and a COMMIT to run and answer.
 */
function loneStatement(queued: readonly TransactionRequest[]): Extract<TransactionRequest, { t: "send" }> | undefined {
  const [begin, statement] = queued;
  if (queued.length !== 2 || begin?.t !== "begin" || begin.mode !== "write" || statement?.t !== "send") return undefined;
  return statement;
}

function newSentResults(): SentResults {
  return { kept: new Set(), results: new Map() };
}

/** A commit whose answer comes on the event loop; `undefined`: the worker stopped first. */
interface AwaitedAnswer {
  /** Answered by the worker (false: by this thread's own connections, EventLoopCommits). */
  viaWorker: boolean;
  settle(reply: PgReply | undefined): void;
}

function unwrap(reply: PgReply): QueryResult | null {
  if (!reply.error) return reply.value ?? null;
  throw fromWire(reply.error);
}

function fromWire(wire: PgWireError): Error {
  let error: Error;
  if (wire.kind === "postgres" && wire.code) error = new PostgresError(wire.message, wire.code, wire.detail, wire.constraint);
  else if (wire.kind === "unavailable") error = new PostgresUnavailableError(wire.message, wire.code);
  else error = new Error(wire.message);
  // Both places matter: the caller's (this thread's stack) and the driver's (the worker's).
  if (wire.stack) error.stack = `${error.stack}\n    in the PostgreSQL worker:\n${wire.stack.split("\n").slice(1).join("\n")}`;
  return error;
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}
