/**
 * The token counting thread (count-worker.ts starts it through the one worker entry,
 * workers/start-worker.ts): loads the encoding in its compact form, hands its tables to the main
 * thread, then answers counts. The functions are the ones tests and benches run on their own
 * thread. Failures are reported in replies (or as the worker's "error" event), never printed.
 */
import { parentPort, workerData } from "node:worker_threads";
import { createCompactCount } from "./compact-encoding.js";
import type { CountReply, CountRequest, CountWorkerData, LoadedReply } from "./count-messages.js";
import { LONG_PIECE_MIN_CHARS, LONG_STRETCH_MIN_CHARS, readEncoding } from "./encodings.js";
import { createExactCount } from "./exact-count.js";

const port = parentPort!;
const { encoding } = workerData as CountWorkerData;
const loadStarted = performance.now();
const { tables, splitRegex } = readEncoding(encoding);
const count = createExactCount(createCompactCount(tables, splitRegex, LONG_PIECE_MIN_CHARS).count, LONG_STRETCH_MIN_CHARS);
const loadMs = performance.now() - loadStarted;
port.postMessage({ t: "loaded", loadMs, tables, splitRegex: { source: splitRegex.source, flags: splitRegex.flags } } satisfies LoadedReply);

port.on("message", ({ requestId, texts }: CountRequest) => {
  let reply: CountReply;
  try {
    reply = { t: "reply", requestId, value: texts.map(count) };
  } catch (error) {
    const { name = "Error", message = String(error), stack } = error instanceof Error ? error : {};
    reply = { t: "reply", requestId, error: { name, message, ...(stack !== undefined ? { stack } : {}) } };
  }
  port.postMessage(reply);
});
