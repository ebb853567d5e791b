/**
 * What the token counter (count-worker.ts) and its thread (count-worker-main.ts) tell each other,
 * in the workers' one envelope (../worker-messages.ts): a count is asked with `count` and answered
 * with a `reply` carrying one count per text, or the error that stopped it; the worker says
 * `loaded` once, first, unasked, with the time the load took (logged at debug level) and the
 * encoding's tables in shared memory. Requests go one at a time.
 */
import type { Reply } from "../worker-messages.js";
import type { CompactTables } from "./compact-encoding.js";
import type { Encoding } from "./counter.js";

export interface CountWorkerData {
  encoding: Encoding;
}

export interface CountRequest {
  t: "count";
  requestId: number;
  texts: string[];
}

export type CountReply = Reply<number[]>;

export interface LoadedReply {
  t: "loaded";
  loadMs: number;
  /** The encoding's compact tables, in shared memory: the main thread counts with the same copy. */
  tables: CompactTables;
  /** The pre-tokenizer regex, as source and flags (a RegExp does not cross threads). */
  splitRegex: { source: string; flags: string };
}
