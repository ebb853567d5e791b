/**
 * One worker thread that counts tokens, started on first use and reused.
 *
 * - Its stdout/stderr are captured (`stdout: true, stderr: true`): the daemon's stdout is the
 *   protocol, and nothing a dependency prints may reach it. The worker also silences its own
 *   streams, because captured output that arrives keeps the parent process alive (Node keeps the
 *   stdio port ref'd once data flows, whatever `unref()` says).
 * - It keeps the process alive only while it has work (ref'd while busy, unref'd when idle), so
 *   an idle counter never holds a CLI command or a test open.
 * - Requests go one at a time, each a batch of texts. Interactive texts (whole entries) go before
 *   the chunks of a large text, so an append waits for at most one chunk of someone's 10 MB tool
 *   result, not for all of it; a burst of appends (appendMany) shares one round trip. Background
 *   texts (the backfill of counts an import left out) come last, in small batches, so interactive
 *   work waits for at most one of those too.
 * - A crash rejects the work it had; the next count starts a fresh worker.
 * - It is the only thread of the daemon that loads the encoding; how long that took is logged at
 *   debug level and kept in `encodingLoadMs`. It builds the encoding's tables in shared memory
 *   and hands them over (`sharedEncoding`): one copy per process, also used by the main thread.
 */
import type { Worker } from "node:worker_threads";
import { log } from "../log.js";
import { startWorker } from "../workers/start-worker.js";
import type { CountReply, CountRequest, CountWorkerData, LoadedReply } from "./count-messages.js";
import type { Encoding } from "./counter.js";

/** The encoding's tables and pre-tokenizer regex the worker shares with the main thread. */
export type SharedEncoding = Omit<LoadedReply, "t" | "loadMs">;

export type Lane = "interactive" | "bulk" | "background";

interface Job {
  text: string;
  resolve(count: number): void;
  reject(error: Error): void;
}

/** Interactive texts sent together in one request, up to about this many characters. */
const MAX_BATCH_CHARS = 1 << 20;
/** Background texts sent together, up to about this many characters (a short stretch of work for the worker). */
const MAX_BACKGROUND_BATCH_CHARS = 1 << 16;

export class CountWorker {
  private worker: Worker | undefined;
  private readonly queues: Record<Lane, Job[]> = { interactive: [], bulk: [], background: [] };
  private inFlight: { requestId: number; jobs: Job[] } | undefined;
  private nextRequestId = 1;
  private disposed = false;
  private loadMs: number | undefined;
  private shared: SharedEncoding | undefined;

  constructor(private readonly encoding: Encoding) {}

  count(text: string, lane: Lane): Promise<number> {
    if (this.disposed) return Promise.reject(new Error("the token counter has been disposed"));
    return new Promise<number>((resolve, reject) => {
      this.queues[lane].push({ text, resolve, reject });
      this.sendNext();
    });
  }

  /**
   * Starts the worker (which loads the encoding on its own thread) without counting
   * anything; resolves once it can count. The first real count then costs no load.
   */
  warmUp(): Promise<void> {
    return this.count("", "background").then(() => undefined);
  }

  /**
   * The encoding's tables the worker built, in shared memory, and its pre-tokenizer regex: what
   * the main thread counts small texts with, without loading anything. Undefined until loaded.
   */
  get sharedEncoding(): SharedEncoding | undefined {
    return this.shared;
  }

  /** How long the latest worker took to load its encoding (ms); undefined until one has. */
  get encodingLoadMs(): number | undefined {
    return this.loadMs;
  }

  /** Stops the worker; counts still pending are rejected. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const worker = this.worker;
    this.failAll(new Error("the token counter has been disposed"));
    if (worker) await worker.terminate();
  }

  private sendNext(): void {
    if (this.inFlight || this.disposed) return;
    const jobs = this.nextBatch();
    if (jobs.length === 0) {
      this.worker?.unref();
      return;
    }
    const worker = this.ensureWorker();
    worker.ref();
    const request: CountRequest = { t: "count", requestId: this.nextRequestId++, texts: jobs.map((job) => job.text) };
    this.inFlight = { requestId: request.requestId, jobs };
    worker.postMessage(request);
  }

  private nextBatch(): Job[] {
    if (this.queues.interactive.length > 0) return takeBatch(this.queues.interactive, MAX_BATCH_CHARS);
    const chunk = this.queues.bulk.shift();
    if (chunk) return [chunk];
    return takeBatch(this.queues.background, MAX_BACKGROUND_BATCH_CHARS);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker("token-count", { data: { encoding: this.encoding } satisfies CountWorkerData });
    worker.on("message", (message: CountReply | LoadedReply) => {
      if (message.t === "loaded") this.onLoaded(worker, message);
      else this.onReply(message);
    });
    worker.on("error", (error) => this.onWorkerLost(worker, error));
    worker.on("exit", (code) => this.onWorkerLost(worker, new Error(`the token counting worker exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private onLoaded(worker: Worker, message: LoadedReply): void {
    if (this.worker !== worker) return;
    this.loadMs = message.loadMs;
    this.shared = { tables: message.tables, splitRegex: message.splitRegex };
    log("debug", `the token counting worker loaded the ${this.encoding} encoding in ${message.loadMs.toFixed(0)} ms`);
  }

  private onReply(reply: CountReply): void {
    const batch = this.inFlight;
    if (!batch || batch.requestId !== reply.requestId) return;
    this.inFlight = undefined;
    const counts = reply.value;
    if (reply.error || !counts) {
      const error = new Error(`token counting failed: ${reply.error?.stack ?? reply.error?.message ?? "no counts in the reply"}`);
      for (const job of batch.jobs) job.reject(error);
    } else {
      batch.jobs.forEach((job, index) => job.resolve(counts[index]!));
    }
    this.sendNext();
  }

  private onWorkerLost(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    // Whatever was in flight is lost with the worker; queued work gets a fresh one.
    const lost = this.inFlight;
    this.inFlight = undefined;
    for (const job of lost?.jobs ?? []) job.reject(error);
    if (this.disposed) return;
    this.sendNext();
  }

  private failAll(error: Error): void {
    const jobs = [...(this.inFlight?.jobs ?? []), ...this.queues.interactive, ...this.queues.bulk, ...this.queues.background];
    this.inFlight = undefined;
    this.queues.interactive = [];
    this.queues.bulk = [];
    this.queues.background = [];
    this.worker = undefined;
    for (const job of jobs) job.reject(error);
  }
}

/** Takes jobs from the front of `queue`, at least one, up to about `maxChars` characters. */
function takeBatch(queue: Job[], maxChars: number): Job[] {
  let chars = 0;
  let taken = 0;
  while (taken < queue.length && (taken === 0 || chars + queue[taken]!.text.length <= maxChars)) {
    chars += queue[taken]!.text.length;
    taken++;
  }
  return queue.splice(0, taken);
}
