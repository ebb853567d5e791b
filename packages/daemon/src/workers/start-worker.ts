/**
 * The one way the daemon starts a worker (docs/architecture.md#workers-one-entry): the SQLite
 * checkpointer, the token counter, the PostgreSQL bridge and the plugins' threads and processes
 * all run the same entry, `cli/worker-main.ts`, told which worker to be by `kind`. Each worker's
 * code is a module like any other, found by that entry with a static import, so it is bundled,
 * type-checked and tested as such: no worker's code is sent as text.
 *
 * The entry is, in this order of preference:
 * - the worker bundle (`dist/bundle/worker.cjs`) when this code runs from a bundle (the bundles
 *   name it in `__workerBundle`, scripts/bundle.mjs): what an installed daemon runs;
 * - the compiled entry in `dist/cli/` when this code runs from `dist/` (the library build);
 * - the TypeScript entry when it runs from the sources (the test runner), with
 *   `register-typescript.mjs` preloaded to strip the types, so tests never run a stale build.
 *
 * The worker's stdout and stderr are always captured, never inherited: no byte of a worker may
 * reach the protocol's stdout. Parent flags are not inherited either (`execArgv`: a parent's
 * `--input-type=module` or a test runner's flags mean nothing to a worker).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ResourceLimits, TransferListItem, Worker } from "node:worker_threads";
import { workerThreads } from "../lazy-node.js";

/** The workers the entry knows (cli/worker-main.ts): threads, and the processes of plugins and of the stdio socket's helper. */
export type WorkerKind = "sqlite-checkpoints" | "token-count" | "postgres" | "plugin" | "socket-helper";

/** The field of `workerData` that names the kind (the rest is the worker's own data). */
export const WORKER_KIND_FIELD = "workerKind";

/** Set in the bundles (scripts/bundle.mjs): the URL of the worker bundle beside them. */
declare const __workerBundle: string | undefined;

export interface WorkerEntry {
  /** The entry module's file. */
  file: string;
  /** Node flags the entry needs (a preload that strips types when it is TypeScript). */
  execArgv: string[];
}

let entry: WorkerEntry | undefined;

/** Where the worker entry is, for this build of the daemon (see above). */
export function workerEntry(): WorkerEntry {
  if (entry) return entry;
  if (typeof __workerBundle === "string") return (entry = { file: fileURLToPath(__workerBundle), execArgv: [] });
  const compiled = fileURLToPath(new URL("../cli/worker-main.js", import.meta.url));
  if (existsSync(compiled)) return (entry = { file: compiled, execArgv: [] });
  const register = new URL("./register-typescript.mjs", import.meta.url).href;
  return (entry = { file: fileURLToPath(new URL("../cli/worker-main.ts", import.meta.url)), execArgv: ["--import", register] });
}

export interface StartWorkerOptions {
  /** The worker's own data (`workerData`, less the kind's field). */
  data?: object;
  transferList?: TransferListItem[];
  env?: NodeJS.ProcessEnv;
  resourceLimits?: ResourceLimits;
}

/** Starts a worker thread of `kind` from the one entry. */
export function startWorker(kind: WorkerKind, options: StartWorkerOptions = {}): Worker {
  const { Worker } = workerThreads();
  const { file, execArgv } = workerEntry();
  return new Worker(file, {
    workerData: { ...options.data, [WORKER_KIND_FIELD]: kind },
    ...(options.transferList !== undefined ? { transferList: options.transferList } : {}),
    stdout: true,
    stderr: true,
    execArgv,
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.resourceLimits !== undefined ? { resourceLimits: options.resourceLimits } : {}),
  });
}

/** Node's arguments that run the entry as a process of `kind` with `data` (plugins.isolation "process"), after Node's own flags. */
export function workerProcessArguments(kind: WorkerKind, data: unknown): string[] {
  const { file, execArgv } = workerEntry();
  return [...execArgv, file, kind, JSON.stringify(data)];
}
