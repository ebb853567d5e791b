/**
 * WAL checkpoints off the append path. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses the threshold and stalls that append for 14–19 ms, so the store turns it off
 * (`wal_autocheckpoint=0`) and a worker thread with its own connection runs PASSIVE checkpoints
 * shortly after writes. PASSIVE never takes the write lock, so appends (in this process or
 * another one) go on while pages are copied back.
 *
 * The worker is started by the first write, not with the store: a daemon that starts to answer a
 * `context/build` (or a CLI command that only reads) never pays for a thread it does not need.
 */
import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";
import { workerThreads } from "../lazy-node.js";
import { log } from "../log.js";

export interface CheckpointerOptions {
  /** Wait this long after a write before checkpointing, so a burst of appends costs one checkpoint. */
  delayMs?: number;
  /** Called when the worker is gone for good, so the caller can fall back to SQLite's own checkpoints. */
  onFailure?: (error: Error) => void;
}

/**
 * The worker's code. Kept as source text (run with `eval`) so it works both from the built
 * `dist/` and from the TypeScript sources under vitest; `require` in an eval worker resolves
 * from the current directory, hence the absolute module path passed in `workerData`.
 */
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.sqliteModule);
const db = new Database(workerData.databasePath, { fileMustExist: true });
let timer;
function checkpoint() {
  timer = undefined;
  let error;
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch (e) { error = String(e && e.message || e); }
  parentPort.postMessage({ t: "done", error });
}
parentPort.on("message", (message) => {
  if (message.t === "write") {
    if (timer === undefined) timer = setTimeout(checkpoint, workerData.delayMs);
  } else if (message.t === "close") {
    if (timer !== undefined) clearTimeout(timer);
    db.close();
    parentPort.close();
  }
});
`;

/** Messages in the envelope of every worker (../worker-messages.ts). */
type ToCheckpointer = { t: "write" } | { t: "close" };
interface DoneMessage {
  t: "done";
  error?: string;
}

export class WalCheckpointer {
  private worker: Worker | undefined;
  private inFlight = false;
  private writtenSinceSignal = false;
  private closed = false;

  constructor(
    private readonly databasePath: string,
    private readonly options: CheckpointerOptions = {},
  ) {}

  private start(): Worker {
    const sqliteModule = createRequire(import.meta.url).resolve("better-sqlite3");
    const { Worker } = workerThreads();
    const worker = new Worker(workerSource, {
      eval: true,
      workerData: { sqliteModule, databasePath: this.databasePath, delayMs: this.options.delayMs ?? 100 },
      // Never let the worker write to the protocol stream (stdout) or interleave with logs. The
      // streams are deliberately not read: a reader would keep the process alive despite unref(),
      // and the worker reports through messages and its "error" event, never by printing.
      stdout: true,
      stderr: true,
    });
    worker.on("message", (message: DoneMessage) => this.onDone(message));
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => {
      if (!this.closed) this.fail(new Error(`checkpoint worker exited with code ${code}`));
    });
    // A checkpointer must never be the reason the daemon stays alive.
    worker.unref();
    return worker;
  }

  /** Tell the worker something was written. Cheap: at most one message per checkpoint cycle. */
  noteWrite(): void {
    if (this.closed) return;
    if (this.inFlight) {
      this.writtenSinceSignal = true;
      return;
    }
    if (!this.worker) {
      try {
        this.worker = this.start();
      } catch (error) {
        // Called after a commit: the write stands, SQLite's own checkpoints take over.
        this.fail(error instanceof Error ? error : new Error(String(error)));
        return;
      }
    }
    this.inFlight = true;
    this.worker.postMessage({ t: "write" } satisfies ToCheckpointer);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    // Keep the process alive until the worker has closed its connection: an awaited close()
    // must settle even when nothing else is left on the event loop.
    worker.ref();
    worker.postMessage({ t: "close" } satisfies ToCheckpointer);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), 2000)));
    if ((await Promise.race([exited, timeout])) === "timeout") await worker.terminate();
    clearTimeout(timer);
  }

  private onDone(message: DoneMessage): void {
    if (message.error) log("debug", `WAL checkpoint: ${message.error}`);
    this.inFlight = false;
    if (this.writtenSinceSignal) {
      this.writtenSinceSignal = false;
      this.noteWrite();
    }
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    log("warn", `WAL checkpoint worker stopped (${error.message}); falling back to SQLite's automatic checkpoints`);
    this.options.onFailure?.(error);
  }
}
