/**
 * The entry of every worker the daemon starts (workers/start-worker.ts): a thread's
 * `workerData` names its kind, a plugin process's first argument does. Bundled as
 * `dist/bundle/worker.cjs` (scripts/bundle.mjs), with each kind's module loaded when that kind
 * starts.
 *
 * The checkpointer, the token counter, the PostgreSQL bridge and the stdio socket's helper never print: whatever a
 * dependency writes is dropped here, before anything loads (captured output that is never read
 * keeps the daemon alive, and none of it may reach the protocol's stdout). A plugin's output is
 * its log: the daemon reads it (plugins/output.ts).
 */
import { workerData } from "node:worker_threads";
import { WORKER_KIND_FIELD, type WorkerKind } from "../workers/start-worker.js";

const MAINS: Record<WorkerKind, () => Promise<unknown>> = {
  "sqlite-checkpoints": () => import("../store/sqlite/checkpoint-worker.js"),
  "token-count": () => import("../tokens/count-worker-main.js"),
  postgres: () => import("../store/postgres/worker/main.js"),
  plugin: () => import("../plugins/worker/bootstrap.js"),
  "socket-helper": () => import("../server/socket-helper.js"),
};

const kind = ((workerData as Record<string, unknown> | null)?.[WORKER_KIND_FIELD] ?? process.argv[2]) as WorkerKind;
if (!(kind in MAINS)) throw new Error(`no worker of kind ${String(kind)}`);
if (kind !== "plugin") process.stdout.write = process.stderr.write = () => true;
void MAINS[kind]();
