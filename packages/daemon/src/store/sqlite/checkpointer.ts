/**
 * WAL checkpoints and search-index merges off the append path.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that crosses the threshold and stalls that
 * append for the whole copy, so the store turns it off (`wal_autocheckpoint=0`) and a worker thread with
 * its own connection runs PASSIVE checkpoints shortly after writes. PASSIVE never takes the write
 * lock, so appends (in this process or another one) go on while pages are copied back.
 *
 * The search index (FTS5) is the same story: its automatic merging runs inside the transaction
 * that wrote the index, and does work in proportion to the whole index's depth — on a database
 * holding a 100k-entry session an append now and then paid for it, which set the p99 of appends
 * (bench/results/daemon.md). So the worker sets the index's `automerge` to 0
 * (a setting stored in the database; every connection follows it) and merges the index itself
 * in small steps (`'merge'`, `MERGE_PAGES` pages each, its own short write transaction) when the
 * database has been idle for `mergeIdleMs` — no write from this process nor, by
 * `PRAGMA data_version`, from any other — and stops at the next write. FTS5's crisis merge (a
 * level holding 16 segments is merged at once) still bounds the index's shape during a long burst
 * of writes with no idle moment; those merges are small (docs/architecture.md, "Search, export
 * order and the command line").
 *
 * The worker is started by the first write, not with the store: a daemon that starts to answer a
 * `context/build` (or a CLI command that only reads) never pays for a thread it does not need.
 */
import type { Worker } from "node:worker_threads";
import { log } from "../../log.js";
import { startWorker } from "../../workers/start-worker.js";
import type { CheckpointerData, DoneMessage, ToCheckpointer } from "./checkpointer-messages.js";

export interface CheckpointerOptions {
  /** Wait this long after a write before checkpointing, so a burst of appends costs one checkpoint. */
  delayMs?: number;
  /** Merge the search index only after the database has been idle this long (default 500 ms). */
  mergeIdleMs?: number;
  /** Called when the worker is gone for good, so the caller can fall back to SQLite's own checkpoints. */
  onFailure?: (error: Error) => void;
}

export class WalCheckpointer {
  private worker: Worker | undefined;
  private inFlight = false;
  private writtenSinceSignal = false;
  private readonly done = { checkpoints: 0, mergeSteps: 0 };
  private closed = false;

  constructor(
    private readonly databasePath: string,
    private readonly options: CheckpointerOptions = {},
  ) {}

  private start(): Worker {
    const data: CheckpointerData = {
      databasePath: this.databasePath,
      delayMs: this.options.delayMs ?? 100,
      mergeIdleMs: this.options.mergeIdleMs ?? 500,
    };
    // Its output is captured and never read (a reader would keep the process alive despite
    // unref()); the worker reports through messages and its "error" event, never by printing.
    const worker = startWorker("sqlite-checkpoints", { data });
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

  /** Checkpoints and merge steps of the search index the worker has run (logged when the store closes). */
  get stats(): { readonly checkpoints: number; readonly mergeSteps: number } {
    return this.done;
  }

  private onDone(message: DoneMessage): void {
    if (message.error) log("debug", `WAL checkpoint worker: ${message.error}`);
    this.done.mergeSteps += message.merged;
    // Merging while idle answers no "write": one may still be in flight.
    if (message.of === "merge") return;
    this.done.checkpoints++;
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
