/**
 * Starting a plugin worker thread, and keeping one started ahead of need. A thread is slow to
 * start (Node's worker bootstrap plus the loader-hooks thread; bench/results/plugins.md); a hot reload or a
 * crash restart that takes a warm standby thread only pays for importing the plugin itself.
 * A standby has loaded nothing of any plugin, so each version still gets a fresh module cache.
 */
import { MessageChannel, type ResourceLimits, type Worker } from "node:worker_threads";
import { startWorker } from "../workers/start-worker.js";
import type { ChannelExit, PluginChannel } from "./channel.js";
import { serveTranspiler } from "./transpiler.js";
import { workerScripts } from "./worker/scripts.js";

export interface ThreadOptions {
  env: NodeJS.ProcessEnv;
  resourceLimits: ResourceLimits;
}

/** A worker that has registered its loader hooks and waits for "activate". */
export function startThread(options: ThreadOptions): Worker {
  const scripts = workerScripts();
  const transpiler = new MessageChannel();
  serveTranspiler(transpiler.port1);
  // Its output is piped, never inherited: a plugin's console.log must not reach the daemon's
  // stdout (protocol bytes); the host reads it as the plugin's log.
  const worker = startWorker("plugin", {
    data: { scripts, transpiler: transpiler.port2 },
    transferList: [transpiler.port2],
    env: options.env,
    resourceLimits: options.resourceLimits,
  });
  worker.once("exit", () => transpiler.port1.close());
  return worker;
}

/** Holds at most one started, unused thread; `take` hands it out and starts the next one shortly after. */
export class StandbyThreads {
  private standby: Worker | undefined;
  private refill: NodeJS.Timeout | undefined;
  private disposed = false;

  /**
   * @param options read at each thread start (the environment to pass may change)
   * @param keepStandby false: every `take` starts a thread (no idle thread is kept)
   */
  constructor(
    private readonly options: () => ThreadOptions,
    private readonly keepStandby: boolean,
    /** Delay before starting the next standby, so it does not compete with the activation that took one. */
    private readonly refillDelayMs = 100,
  ) {}

  take(): Worker {
    const thread = this.standby;
    this.standby = undefined;
    if (this.keepStandby && !this.disposed) this.scheduleRefill();
    return thread ?? startThread(this.options());
  }

  private scheduleRefill(): void {
    clearTimeout(this.refill);
    this.refill = setTimeout(() => {
      if (this.disposed || this.standby !== undefined) return;
      const thread = startThread(this.options());
      thread.on("error", () => undefined); // an idle standby that dies is simply dropped
      thread.once("exit", () => {
        if (this.standby === thread) this.standby = undefined;
      });
      this.standby = thread;
    }, this.refillDelayMs);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.refill);
    const thread = this.standby;
    this.standby = undefined;
    await thread?.terminate();
  }
}

const OUT_OF_MEMORY = "ERR_WORKER_OUT_OF_MEMORY";

/**
 * How long a thread asked to stop may take. `worker.terminate()` interrupts JavaScript (a loop
 * included) at once, but not a system call or native code: a thread blocked in one stops only
 * when it returns, which may be never.
 */
export const THREAD_STOP_TIMEOUT_MS = 2_000;

/** A plugin worker thread as a PluginChannel. */
export function workerChannel(worker: Worker, stopTimeoutMs = THREAD_STOP_TIMEOUT_MS): PluginChannel {
  let ended = false;
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  void exited.then(() => (ended = true));
  let lastError: Error | undefined;
  worker.on("error", (error) => {
    lastError = error;
  });
  return {
    stdout: worker.stdout,
    stderr: worker.stderr,
    post: (message) => worker.postMessage(message),
    onMessage: (listener) => worker.on("message", listener),
    onExit: (listener) =>
      worker.once("exit", (code) => {
        const oom = (lastError as { code?: string } | undefined)?.code === OUT_OF_MEMORY;
        const exit: ChannelExit = oom
          ? { cause: "oom", message: "the plugin ran out of memory (its worker's heap limit) and was terminated" }
          : {
              cause: "crash",
              message:
                lastError !== undefined
                  ? `the plugin's worker crashed: ${lastError.name}: ${lastError.message}`
                  : `the plugin's worker exited with code ${code}`,
            };
        listener(exit);
      }),
    terminate: async () => {
      if (ended) return true;
      void worker.terminate();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), stopTimeoutMs);
        timer.unref();
      });
      const stopped = await Promise.race([exited.then(() => true as const), late]);
      clearTimeout(timer);
      return stopped;
    },
  };
}
