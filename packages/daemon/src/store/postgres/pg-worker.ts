/**
 * The PostgreSQL bridge's worker thread: it owns the `pg` Pool and does the network I/O while the
 * daemon's main thread blocks on a shared-memory cell (sync-postgres.ts).
 *
 * The program is one self-contained function (`runPgWorker`), sent to the worker as source text
 * (`toString()`, run with `eval`), as the token counting worker does: a separate worker file would
 * exist only under dist/ and could not run from the TypeScript sources the tests use, and the
 * bundles would have to ship it beside themselves. The function therefore uses nothing from its
 * module scope; it is handed `pg` and `node:worker_threads` as arguments, `pg` resolved by the
 * main thread to an absolute path.
 *
 * Messages (the workers' one envelope, ../../worker-messages.ts):
 * - main → worker (`worker.postMessage`): the `PgRequest`s; each carries a `requestId` and is
 *   answered on the reply port, except `abandon`, `unlisten` and `close`.
 * - worker → main, on the reply port: a `PgReply` for each request, after which the worker adds
 *   one to the shared cell and wakes the main thread (it reads the port with
 *   `receiveMessageOnPort`).
 * - worker → main, on `parentPort` (the main thread's event loop): `PgEvent`s, i.e. LISTEN
 *   notifications, "the LISTEN connection came back" and log lines.
 */
import type { Reply, WireError } from "../../worker-messages.js";
import type { Client, PoolClient, QueryResult as PgResult } from "pg";

export type TransactionMode = "read" | "write";

export type PgRequest =
  | { t: "connect"; requestId: number }
  | { t: "query"; requestId: number; text: string; params: unknown[]; name?: string; txId?: number }
  | { t: "exec"; requestId: number; script: string; txId?: number }
  | { t: "begin"; requestId: number; txId: number; mode: TransactionMode }
  | { t: "commit"; requestId: number; txId: number }
  | { t: "rollback"; requestId: number; txId: number }
  | { t: "listen"; requestId: number; channel: string }
  | { t: "unlisten"; channel: string }
  /** Session-level advisory locks (two-key form) on the lock connection, held until unlocked or closed. */
  | { t: "lock"; requestId: number; space: number; key: number }
  | { t: "unlock"; requestId: number; space: number; key: number }
  /** The main thread gave up waiting for this request: drop its connection (it may be stuck). */
  | { t: "abandon"; requestId: number }
  | { t: "close" };

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

export type PgReply = Reply<QueryResult | null> & { error?: PgWireError };

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
  /** Int32Array cell: the worker adds one after each reply it posts. */
  signal: SharedArrayBuffer;
  replyPort: import("node:worker_threads").MessagePort;
}

type PgModule = typeof import("pg");
// Types by name, not as `import("pg").X`: the bundle build rewrites `import("pg")` calls (scripts/bundle.mjs).
type PgPoolClient = PoolClient;
type PgQueryResult = PgResult;
type PgClient = Client;
type Threads = typeof import("node:worker_threads");

/** The worker's program. Self-contained: see the file comment. */
export function runPgWorker(pg: PgModule, threads: Threads): void {
  const parentPort = threads.parentPort!;
  const data = threads.workerData as PgWorkerData;
  const cell = new Int32Array(data.signal);
  const replyPort = data.replyPort;

  // int8 (BIGINT, count(*), identity columns) and numeric (sum(bigint), avg()) as JS numbers, as
  // SQLite gives them to the store, rather than strings. The store keeps counts and sizes, far
  // below 2^53, and no money.
  const INT8 = 20;
  const INT8_ARRAY = 1016;
  const NUMERIC = 1700;
  const NUMERIC_ARRAY = 1231;
  const toNumber = (value: string) => Number(value);
  const types = {
    getTypeParser(oid: number, format?: "text" | "binary") {
      if (format === "binary") return pg.types.getTypeParser(oid as never, format);
      if (oid === INT8 || oid === NUMERIC) return toNumber;
      if (oid === INT8_ARRAY || oid === NUMERIC_ARRAY) {
        const parseArray = pg.types.getTypeParser(oid as never, "text") as (value: string) => unknown;
        const numbers = (value: unknown): unknown =>
          Array.isArray(value) ? value.map(numbers) : typeof value === "string" ? Number(value) : value;
        return (value: string) => numbers(parseArray(value));
      }
      return pg.types.getTypeParser(oid as never, "text");
    },
  };
  const clientConfig = {
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
    types,
  };
  const pool = new pg.Pool({ ...clientConfig, max: 4, idleTimeoutMillis: 30_000, allowExitOnIdle: true });
  // An idle pooled connection that breaks (server restart) is dropped by the pool; this only keeps
  // the 'error' event from being fatal.
  pool.on("error", () => {});

  type Client = PgPoolClient;
  interface Transaction {
    client: Client | undefined;
    /** The connection broke (or was dropped) mid-transaction: the server has rolled it back. */
    lost: boolean;
    /** Discard the connection instead of pooling it when the transaction ends. */
    discard: boolean;
  }
  const transactions = new Map<number, Transaction>();
  /** Requests in progress, and the connection each runs on (to drop it on `abandon`). */
  const inProgress = new Map<number, { client?: Client; abandoned: boolean }>();
  let closing = false;

  const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "25P03"]);
  const CONNECTION_MESSAGES =
    /connection terminated|connection timeout|timeout exceeded when trying to connect|query read timeout|not queryable|connection ended|socket|ECONN|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN/i;

  function sqlState(error: unknown): string | undefined {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  }

  /** A lost or unreachable server, as opposed to an error in a statement. */
  function isConnectionError(error: unknown): boolean {
    const state = sqlState(error);
    if (state) return UNAVAILABLE_SQLSTATES.has(state) || (state.startsWith("08") && state !== "08P01");
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return true;
    return CONNECTION_MESSAGES.test(error instanceof Error ? error.message : String(error));
  }

  function toWire(error: unknown, unavailable: boolean): PgWireError {
    const e = (error instanceof Error ? error : new Error(String(error))) as Error & {
      code?: unknown;
      detail?: string;
      constraint?: string;
    };
    const state = sqlState(e);
    let message = e.message;
    if (state === "57014" && /statement timeout/.test(message)) {
      message = `${message} (statement_timeout is ${data.statementTimeoutMs} ms)`;
    }
    const wire: PgWireError = { kind: unavailable ? "unavailable" : state ? "postgres" : "usage", name: e.name, message };
    if (e.stack) wire.stack = e.stack;
    if (state) wire.code = state;
    else if (typeof e.code === "string") wire.code = e.code;
    if (typeof e.detail === "string") wire.detail = e.detail;
    if (typeof e.constraint === "string") wire.constraint = e.constraint;
    return wire;
  }

  class Unavailable extends Error {}
  class Usage extends Error {}

  function reply(requestId: number, value: QueryResult | null, error?: PgWireError): void {
    inProgress.delete(requestId);
    const message: PgReply = error ? { t: "reply", requestId, error } : { t: "reply", requestId, value };
    replyPort.postMessage(message);
    Atomics.add(cell, 0, 1);
    Atomics.notify(cell, 0);
  }

  function event(message: PgEvent): void {
    parentPort.postMessage(message);
  }

  /** Keeps a checked-out connection's 'error' event from being fatal; the running query fails by itself. */
  function guard(client: Client): void {
    if (!(client as unknown as { bridgeGuarded?: boolean }).bridgeGuarded) {
      (client as unknown as { bridgeGuarded?: boolean }).bridgeGuarded = true;
      client.on("error", () => {});
    }
  }

  /** A pooled connection that has already seen its end (e.g. the server's FATAL on shutdown). */
  function isDead(client: Client): boolean {
    const state = client as unknown as { _queryable?: boolean; _ending?: boolean; _connectionError?: boolean };
    return state._queryable === false || state._ending === true || state._connectionError === true;
  }

  async function acquire(requestId: number): Promise<Client> {
    let client: Client;
    for (let attempt = 1; ; attempt++) {
      try {
        client = await pool.connect();
      } catch (error) {
        throw Object.assign(new Unavailable(`cannot connect to PostgreSQL: ${(error as Error).message}`), {
          code: (error as { code?: unknown }).code,
        });
      }
      // Nothing was sent on a dead connection yet: taking another one is safe.
      if (!isDead(client) || attempt > 4) break;
      client.release(true);
    }
    guard(client);
    const state = inProgress.get(requestId);
    if (state?.abandoned) {
      client.release(true);
      throw new Unavailable("the request was abandoned");
    }
    if (state) state.client = client;
    return client;
  }

  function release(client: Client, discard: boolean): void {
    try {
      client.release(discard ? true : undefined);
    } catch {
      // released already (abandon raced with the end of the request)
    }
  }

  function transaction(txId: number): Transaction {
    const tx = transactions.get(txId);
    if (!tx) throw new Usage("no such transaction (it was never begun, or has ended)");
    if (tx.lost || !tx.client) {
      throw new Unavailable("the connection to PostgreSQL was lost during the transaction; it was rolled back");
    }
    return tx;
  }

  /** Runs `work` on the transaction's connection, or on a pooled one (returned after). */
  async function onClient<T>(requestId: number, txId: number | undefined, work: (client: Client) => Promise<T>): Promise<T> {
    if (txId !== undefined) {
      const tx = transaction(txId);
      const client = tx.client!;
      const state = inProgress.get(requestId);
      if (state) state.client = client;
      try {
        return await work(client);
      } catch (error) {
        if (isConnectionError(error)) {
          tx.lost = true;
          tx.client = undefined;
          release(client, true);
        } else if (sqlState(error) === "0A000") {
          tx.discard = true; // a cached plan that no longer fits (schema changed): start afresh
        }
        throw error;
      }
    }
    const client = await acquire(requestId);
    try {
      const result = await work(client);
      release(client, false);
      return result;
    } catch (error) {
      release(client, isConnectionError(error) || sqlState(error) === "0A000");
      throw error;
    }
  }

  async function query(request: Extract<PgRequest, { t: "query" }>): Promise<QueryResult> {
    const values = request.params.map((value) => (typeof value === "bigint" ? value.toString() : value));
    const run = () =>
      onClient(request.requestId, request.txId, async (client) => {
        const config = request.name ? { name: request.name, text: request.text, values } : { text: request.text, values };
        const result = await client.query(config);
        return { rows: result.rows, rowCount: result.rowCount ?? 0 };
      });
    try {
      return await run();
    } catch (error) {
      // "cached plan must not change result type": a table this prepared statement reads was
      // altered. Its connection was dropped; outside a transaction one retry re-prepares it.
      if (request.txId === undefined && sqlState(error) === "0A000" && request.name) return await run();
      throw error;
    }
  }

  async function begin(request: Extract<PgRequest, { t: "begin" }>): Promise<null> {
    const client = await acquire(request.requestId);
    try {
      await client.query(
        request.mode === "read" ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN ISOLATION LEVEL READ COMMITTED",
      );
    } catch (error) {
      release(client, true);
      throw error;
    }
    if (inProgress.get(request.requestId)?.abandoned) {
      release(client, true);
      throw new Unavailable("the request was abandoned");
    }
    transactions.set(request.txId, { client, lost: false, discard: false });
    return null;
  }

  async function end(request: Extract<PgRequest, { t: "commit" | "rollback" }>): Promise<null> {
    const tx = transactions.get(request.txId);
    transactions.delete(request.txId);
    if (!tx) throw new Usage("no such transaction (it was never begun, or has ended)");
    const client = tx.client;
    if (tx.lost || !client) {
      // The server rolled it back when the connection went: a rollback has nothing left to do.
      if (request.t === "rollback") return null;
      throw new Unavailable("the connection to PostgreSQL was lost during the transaction; it was rolled back");
    }
    const state = inProgress.get(request.requestId);
    if (state) state.client = client;
    let result: PgQueryResult;
    try {
      result = await client.query(request.t === "commit" ? "COMMIT" : "ROLLBACK");
    } catch (error) {
      release(client, true);
      throw error;
    }
    release(client, tx.discard);
    // COMMIT of a transaction in which a statement failed ends it with a rollback, without error.
    if (request.t === "commit" && result.command === "ROLLBACK") {
      throw Object.assign(new Error("the transaction was rolled back, not committed: a statement in it had failed"), {
        code: "25P02",
      });
    }
    return null;
  }

  // ---- LISTEN: one dedicated connection, reconnected with backoff ----
  const channels = new Set<string>();
  let listener: PgClient | undefined;
  let listenerReady: Promise<PgClient> | undefined;
  let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  let backoffMs = 100;
  /** LISTEN/UNLISTEN run one at a time, in the order asked. */
  let listenQueue: Promise<unknown> = Promise.resolve();

  const quoteIdentifier = (name: string) => `"${name.replace(/"/g, '""')}"`;

  function connectListener(): Promise<PgClient> {
    if (listenerReady) return listenerReady;
    const client = new pg.Client(clientConfig);
    let ready: Promise<PgClient> | undefined;
    ready = (async () => {
      client.on("notification", (message) => {
        event({ t: "notification", channel: message.channel, payload: message.payload ?? "" });
      });
      const lost = () => {
        if (listener !== client && listenerReady !== ready) return;
        listener = undefined;
        listenerReady = undefined;
        client.end().catch(() => {});
        scheduleReconnect();
      };
      client.on("error", lost);
      client.on("end", lost);
      try {
        await client.connect();
        for (const channel of channels) await client.query(`LISTEN ${quoteIdentifier(channel)}`);
      } catch (error) {
        if (listenerReady === ready) listenerReady = undefined;
        client.end().catch(() => {});
        throw error;
      }
      listener = client;
      backoffMs = 100;
      return client;
    })();
    listenerReady = ready;
    return ready;
  }

  function scheduleReconnect(): void {
    if (closing || channels.size === 0 || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      if (closing || channels.size === 0) return;
      connectListener().then(
        () => event({ t: "listen-reconnected" }),
        (error) => {
          event({ t: "log", level: "debug", message: `LISTEN connection: ${(error as Error).message}` });
          backoffMs = Math.min(backoffMs * 2, 5000);
          scheduleReconnect();
        },
      );
    }, backoffMs);
  }

  function listen(channel: string): Promise<null> {
    const work = listenQueue.then(async () => {
      channels.add(channel);
      try {
        const client = await connectListener();
        await client.query(`LISTEN ${quoteIdentifier(channel)}`);
      } catch (error) {
        channels.delete(channel);
        throw error;
      }
      return null;
    });
    listenQueue = work.catch(() => {});
    return work;
  }

  function unlisten(channel: string): void {
    listenQueue = listenQueue.then(async () => {
      channels.delete(channel);
      if (listener) await listener.query(`UNLISTEN ${quoteIdentifier(channel)}`).catch(() => {});
      if (channels.size === 0 && listener) {
        const client = listener;
        listener = undefined;
        listenerReady = undefined;
        await client.end().catch(() => {});
      }
    });
  }

  // ---- Session locks: one dedicated connection, never pooled nor reconnected ----
  // A session-level advisory lock lives exactly as long as its connection: this one is opened for
  // the first lock, stays open while any is held, and is not reconnected when it breaks (the
  // locks are gone then; the main thread hears "locks-lost" and decides what that means).
  let locker: Promise<PgClient> | undefined;
  const held = new Set<string>();
  /** Lock requests run one at a time, in the order asked. */
  let lockQueue: Promise<unknown> = Promise.resolve();

  function connectLocker(): Promise<PgClient> {
    if (locker) return locker;
    const client = new pg.Client(clientConfig);
    const ready = client.connect().then(() => client);
    const lost = () => {
      if (locker !== ready) return;
      locker = undefined;
      client.end().catch(() => {});
      if (held.size > 0 && !closing) event({ t: "locks-lost" });
      held.clear();
    };
    client.on("error", lost);
    client.on("end", lost);
    ready.catch(() => {
      if (locker === ready) locker = undefined;
    });
    locker = ready;
    return ready;
  }

  function sessionLock(request: { t: "lock" | "unlock"; space: number; key: number }): Promise<QueryResult> {
    const work = lockQueue.then(async () => {
      const id = `${request.space}:${request.key}`;
      if (request.t === "unlock" && !held.has(id)) return { rows: [{ done: false }], rowCount: 1 };
      const client = await connectLocker();
      const sql = request.t === "lock" ? "SELECT pg_try_advisory_lock($1, $2) AS done" : "SELECT pg_advisory_unlock($1, $2) AS done";
      const result = await client.query(sql, [request.space, request.key]);
      const done = result.rows[0]?.done === true;
      if (request.t === "lock" && done) held.add(id);
      if (request.t === "unlock") held.delete(id);
      if (held.size === 0 && locker) {
        // Nothing held any more: the connection is not kept open for nothing.
        locker = undefined;
        await client.end().catch(() => {});
      }
      return { rows: [{ done }], rowCount: 1 };
    });
    lockQueue = work.catch(() => {});
    return work;
  }

  async function close(): Promise<void> {
    closing = true;
    if (reconnectTimer) clearTimeout(reconnectTimer);
    channels.clear();
    for (const tx of transactions.values()) if (tx.client) release(tx.client, true);
    transactions.clear();
    const ending: Promise<unknown>[] = [pool.end().catch(() => {})];
    if (listener) ending.push(listener.end().catch(() => {}));
    else if (listenerReady) ending.push(listenerReady.then((client) => client.end()).catch(() => {}));
    if (locker) ending.push(locker.then((client) => client.end()).catch(() => {}));
    await Promise.all(ending);
    replyPort.close();
    parentPort.close();
  }

  async function handle(request: Exclude<PgRequest, { t: "abandon" | "unlisten" | "close" }>): Promise<QueryResult | null> {
    switch (request.t) {
      case "connect":
        return onClient(request.requestId, undefined, async () => null);
      case "query":
        return query(request);
      case "exec":
        return onClient(request.requestId, request.txId, async (client) => {
          await client.query(request.script);
          return null;
        });
      case "begin":
        return begin(request);
      case "commit":
      case "rollback":
        return end(request);
      case "listen":
        return listen(request.channel);
      case "lock":
      case "unlock":
        return sessionLock(request);
    }
  }

  // A bug in a callback must not take the thread (and every connection) down: say it, go on.
  process.on("uncaughtException", (error) => event({ t: "log", level: "warn", message: `PostgreSQL worker: ${error.stack ?? error}` }));
  process.on("unhandledRejection", (error) => event({ t: "log", level: "warn", message: `PostgreSQL worker: ${error}` }));

  parentPort.on("message", (request: PgRequest) => {
    if (request.t === "abandon") {
      const state = inProgress.get(request.requestId);
      if (state) {
        state.abandoned = true;
        // Closing the socket fails the stuck query; its connection is then discarded.
        const stream = (state.client as unknown as { connection?: { stream?: { destroy(): void } } } | undefined)?.connection?.stream;
        stream?.destroy();
      }
      return;
    }
    if (request.t === "unlisten") return unlisten(request.channel);
    if (request.t === "close") {
      void close();
      return;
    }
    if (closing) {
      reply(request.requestId, null, toWire(new Error("the PostgreSQL connection is closed"), false));
      return;
    }
    inProgress.set(request.requestId, { abandoned: false });
    handle(request).then(
      (value) => reply(request.requestId, value),
      (error) => {
        const unavailable = error instanceof Unavailable || (!(error instanceof Usage) && isConnectionError(error));
        const wire = toWire(error, unavailable);
        if (error instanceof Usage) wire.kind = "usage";
        reply(request.requestId, null, wire);
      },
    );
  });
}

/** The worker's entry, for `new Worker(source, { eval: true })`. */
export function pgWorkerSource(pgModulePath: string): string {
  return `"use strict";
// Output is captured by the parent (it must never reach the protocol's stdout), and captured
// output keeps the parent alive until read; nothing here needs to print, so nothing may.
process.stdout.write = process.stderr.write = () => true;
(${runPgWorker.toString()})(require(${JSON.stringify(pgModulePath)}), require("node:worker_threads"));
`;
}
