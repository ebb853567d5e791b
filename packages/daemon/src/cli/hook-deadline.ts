/**
 * One deadline for a whole run of `base-context claude-code hook`, counted from the process's
 * start: reading stdin, opening (or creating) the home, importing and answering. Claude Code gives
 * the hook 30 s, and a hook that overruns holds its compaction: the hook must end in time whatever
 * it is doing. Two steps:
 *
 * - at SOFT_MS, `signal` aborts: the import stops between two chunks or batches (what it wrote of
 *   an existing session stays: whole entries), the hook answers nothing and says why on stderr;
 * - at HARD_MS, if the process is still there (its main thread inside a system call that never
 *   returns, or the soft stop taking too long), a thread of its own ends it with exit status 0
 *   after one line on stderr (hook-deadline-worker.ts).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import { workerThreads } from "../lazy-node.js";

/** The limit the hook promises (docs/claude-code.md): under the 30 s Claude Code gives it. */
export const HOOK_DEADLINE_MS = 20_000;
/** The import and the answer stop here, leaving time to stop them in order. */
const SOFT_MS = HOOK_DEADLINE_MS - 4_000;
/**
 * The process ends here whatever it is doing: 2 s before the limit, as the thread that ends it
 * must still be scheduled, write its line and start WASI (slow on a loaded machine).
 */
const HARD_MS = HOOK_DEADLINE_MS - 2_000;

export interface HookDeadline {
  /** Aborts at the soft deadline (its reason says so). */
  readonly signal: AbortSignal;
  /** The run is over: the last resort is called off. */
  stop(): void;
}

/** Starts both steps; `startedAt` is when the process started (`performance.timeOrigin`). */
export function startHookDeadline(message: string, startedAt = performance.timeOrigin): HookDeadline {
  const controller = new AbortController();
  const soft = setTimeout(
    () => controller.abort(new Error(`it ran out of its ${HOOK_DEADLINE_MS / 1000} s (the next run goes on from what was stored)`)),
    Math.max(0, startedAt + SOFT_MS - Date.now()),
  );
  soft.unref();
  const last = lastResort(startedAt + HARD_MS, message);
  return {
    signal: controller.signal,
    stop() {
      clearTimeout(soft);
      void last?.terminate();
    },
  };
}

function lastResort(at: number, message: string): Worker | undefined {
  const compiled = new URL("./hook-deadline-worker.js", import.meta.url);
  // Run from the TypeScript sources (unit tests), there is no compiled worker: the soft step only.
  if (!existsSync(fileURLToPath(compiled))) return undefined;
  const { Worker } = workerThreads();
  const worker = new Worker(compiled, { workerData: { at, message }, stdout: false, stderr: false, execArgv: [] });
  worker.unref();
  return worker;
}
