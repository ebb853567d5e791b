/**
 * Node built-ins the daemon needs only for work that may never come, or comes later (a worker
 * thread): required on first use rather than when a module importing them loads, so that loading
 * them is not in the way of a start's first requests (docs/architecture.md#start-path-and-bundles).
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** node:worker_threads (~1 ms of CPU to load). */
export function workerThreads(): typeof import("node:worker_threads") {
  return require("node:worker_threads") as typeof import("node:worker_threads");
}

/** node:child_process, for a program run synchronously on a rare path (the writer gate's mkfifo). */
export function childProcess(): typeof import("node:child_process") {
  return require("node:child_process") as typeof import("node:child_process");
}
