/**
 * The counting worker's program, as source text.
 *
 * The worker runs the very functions tests and benches use on their own thread (`mergeLongPiece`,
 * `parseRankList`, `createCompactCount`, `createExactCount`), taken from their compiled source
 * with `toString()`: a separate worker file would exist only under dist/ and could not run from
 * the TypeScript sources the tests use. All are self-contained for that reason. The worker `require`s the
 * encoding's data by absolute file path, resolved on the main thread, so it does not depend on
 * its own module resolution. Failures are reported in replies (or as the worker's "error" event),
 * never printed.
 *
 * Protocol: once it has loaded the encoding, the worker posts a `LoadedReply` with the time that
 * took (logged at debug level by count-worker.ts) and the encoding's tables in shared memory. The main thread posts `CountRequest`s one at
 * a time and the worker answers each with a `CountReply` carrying one count per text, or the
 * error that stopped it.
 */
import type { Reply } from "../worker-messages.js";
import type { Encoding } from "./counter.js";
import { createCompactCount, parseRankList, type CompactTables } from "./compact-encoding.js";
import { encodingFiles, LONG_PIECE_MIN_CHARS, LONG_STRETCH_MIN_CHARS } from "./encodings.js";
import { createExactCount } from "./exact-count.js";
import { mergeLongPiece } from "./long-piece-merge.js";

// The workers' one envelope (worker-messages.ts): a count is asked with `count` and answered
// with a `reply` carrying the counts; the worker says `loaded` once, first, unasked.
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

export function countWorkerSource(encoding: Encoding): string {
  const { ranksPath, splitRegexPath, splitRegexName } = encodingFiles(encoding);
  return `"use strict";
// Output is captured by the parent (it must never reach the protocol's stdout), and captured
// output keeps the parent alive until read; nothing here needs to print, so nothing may.
process.stdout.write = process.stderr.write = () => true;
const { parentPort } = require("node:worker_threads");
const mergeLongPiece = ${mergeLongPiece.toString()};
const parseRankList = ${parseRankList.toString()};
const createCompactCount = ${createCompactCount.toString()};
const createExactCount = ${createExactCount.toString()};
const loadStarted = performance.now();
const ranks = parseRankList(require("node:fs").readFileSync(${JSON.stringify(ranksPath)}));
const splitRegex = require(${JSON.stringify(splitRegexPath)})[${JSON.stringify(splitRegexName)}];
const compact = createCompactCount(ranks, splitRegex, mergeLongPiece, ${LONG_PIECE_MIN_CHARS});
const count = createExactCount(compact.count, ${LONG_STRETCH_MIN_CHARS});
const loadMs = performance.now() - loadStarted;
parentPort.postMessage({ t: "loaded", loadMs, tables: ranks, splitRegex: { source: splitRegex.source, flags: splitRegex.flags } });
parentPort.on("message", ({ requestId, texts }) => {
  let reply;
  try {
    reply = { t: "reply", requestId, value: texts.map(count) };
  } catch (error) {
    const { name = "Error", message = String(error), stack } = error instanceof Error ? error : {};
    reply = { t: "reply", requestId, error: { name, message, stack } };
  }
  parentPort.postMessage(reply);
});
`;
}
