/**
 * The PostgreSQL worker thread: it owns the `pg` connections and does the network I/O while the
 * daemon's main thread blocks on a shared-memory cell (../sync-postgres.ts). What it is told and
 * answers is in messages.ts; the pooled connections and their transactions in transactions.ts;
 * LISTEN in listener.ts; session-level advisory locks in session-locks.ts.
 */
import pg from "pg";
import { parentPort, workerData } from "node:worker_threads";
import { clientConfig } from "./client-config.js";
import { toWire, Usage } from "./errors.js";
import { Listener } from "./listener.js";
import { REPLIES, STARTED, type AnsweredRequest, type PgEvent, type PgReply, type PgRequest, type PgWorkerData, type QueryResult } from "./messages.js";
import { SessionLocks } from "./session-locks.js";
import { Transactions } from "./transactions.js";

const port = parentPort!;
const data = workerData as PgWorkerData;
const cell = new Int32Array(data.signal);
const config = clientConfig(pg, data);
const event = (message: PgEvent): void => port.postMessage(message);

// Room for the main thread's transaction beside the commits it does not wait for that it could
// not make itself (SyncPostgres.commitAsync): each holds a connection until the server answers.
const POOL_SIZE = 8;
const transactions = new Transactions(pg, config, POOL_SIZE);
const listener = new Listener(pg, config, event);
const sessionLocks = new SessionLocks(pg, config, event);
let closing = false;

function reply(request: AnsweredRequest, value: QueryResult | null, error?: PgReply["error"]): void {
  const { requestId } = request;
  const sent = transactions.finished(requestId);
  const message: PgReply = error ? { t: "reply", requestId, error } : { t: "reply", requestId, value };
  if (sent) message.sent = sent;
  if (request.t === "commit" && request.onEventLoop) return port.postMessage(message);
  data.replyPort.postMessage(message);
  Atomics.add(cell, REPLIES, 1);
  Atomics.notify(cell, REPLIES);
}

function answer(request: AnsweredRequest): Promise<QueryResult | null> {
  switch (request.t) {
    case "connect":
      return transactions.connect(request.requestId);
    case "query":
      return transactions.query(request);
    case "exec":
      return transactions.exec(request);
    case "result":
      return transactions.result(request);
    case "commit":
    case "rollback":
      return transactions.end(request);
    case "listen":
      return listener.listen(request.channel);
    case "lock":
    case "unlock":
      return sessionLocks.run(request);
    case "abandon":
      return Promise.reject(new Usage("abandon is not answered"));
  }
}

async function close(): Promise<void> {
  closing = true;
  await Promise.all([transactions.close(), listener.close(), sessionLocks.close()]);
  data.replyPort.close();
  port.close();
}

// A bug in a callback must not take the thread (and every connection) down: say it, go on.
process.on("uncaughtException", (error) => event({ t: "log", level: "warn", message: `PostgreSQL worker: ${error.stack ?? error}` }));
process.on("unhandledRejection", (error) => event({ t: "log", level: "warn", message: `PostgreSQL worker: ${error}` }));

// Several requests come as one message when the main thread made them in one run (a transaction's
// begin, statements and commit): handled in one turn, their statements leave in one write.
port.on("message", (message: PgRequest | PgRequest[]) => {
  for (const request of Array.isArray(message) ? message : [message]) {
    // As if each had come alone: one that throws does not keep the others from being handled.
    try {
      handle(request);
    } catch (error) {
      event({ t: "log", level: "warn", message: `PostgreSQL worker: ${(error as Error).stack ?? error}` });
    }
  }
});

function handle(request: PgRequest): void {
  switch (request.t) {
    case "abandon":
      return transactions.abandon(request.requestId);
    case "unlisten":
      return listener.unlisten(request.channel);
    case "close":
      return void close();
    case "begin":
      return closing ? undefined : transactions.begin(request);
    case "send":
      return closing ? undefined : transactions.send(request);
    case "release":
      return transactions.release(request.txId);
  }
  if (closing) {
    reply(request, null, toWire(new Error("the PostgreSQL connection is closed"), data.statementTimeoutMs));
    return;
  }
  transactions.started(request);
  answer(request).then(
    (value) => reply(request, value),
    (error) => reply(request, null, toWire(error, data.statementTimeoutMs)),
  );
}

// Running: the main thread's calls start counting their bound now.
Atomics.store(cell, STARTED, 1);
Atomics.notify(cell, STARTED);
