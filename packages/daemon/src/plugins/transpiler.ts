/**
 * TypeScript for plugin workers, done on the daemon's thread: the workers' loader hooks send the
 * path of a `.ts` file over a MessagePort and get JavaScript back. sucrase is loaded once per
 * daemon instead of once per worker, which keeps a hot reload of a TypeScript plugin as fast as
 * one of a JavaScript plugin. Types are stripped, nothing is checked; line numbers are kept, so
 * stack traces point at the author's lines.
 */
import { createRequire } from "node:module";
import type { MessagePort } from "node:worker_threads";
import type { Reply } from "../worker-messages.js";

/** A worker's request: the JavaScript of the TypeScript file at `path`, as a reply's `value`. */
export interface TranspileRequest {
  t: "transpile";
  requestId: number;
  path: string;
}

type Transform = (code: string, options: Record<string, unknown>) => { code: string };
let transform: Transform | undefined;

/** Synchronous and cheap after the first call (which loads sucrase). */
export function stripTypes(source: string, filePath: string): string {
  transform ??= (createRequire(import.meta.url)("sucrase") as { transform: Transform }).transform;
  return transform(source, { transforms: ["typescript"], filePath, disableESTransforms: true }).code;
}

/** Answers a worker's transpile requests until the port closes (when the worker ends). */
export function serveTranspiler(port: MessagePort): void {
  port.on("message", async ({ requestId, path }: TranspileRequest) => {
    let reply: Reply<string>;
    try {
      // Loaded on first use: this module is reachable from the start path (the PostgreSQL worker's
      // start imports the loader set-up), which loads no fs/promises (docs/architecture.md).
      const { readFile } = await import("node:fs/promises");
      reply = { t: "reply", requestId, value: stripTypes(await readFile(path, "utf8"), path) };
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      reply = { t: "reply", requestId, error: { name, message } };
    }
    port.postMessage(reply);
  });
  // The worker keeps the process alive while it runs; this port alone must not.
  port.unref();
}
