/**
 * Node built-ins the daemon needs only for work that may never come, or comes later (a worker
 * thread): required on first use rather than when a module importing them loads, so that loading
 * them is not in the way of a start's first requests (docs/architecture.md#start-path-and-bundles).
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** node:worker_threads. */
export function workerThreads(): typeof import("node:worker_threads") {
  return require("node:worker_threads") as typeof import("node:worker_threads");
}
