/**
 * Starting the PostgreSQL worker (worker/main.ts) as the module it is. From the compiled daemon
 * (dist/, and the bundles, which find dist/ beside them) its `.js` modules are loaded as they
 * are. From the TypeScript sources (the test runner) they are loaded through the plugin workers'
 * loader hooks, which strip the types (plugins/worker/scripts.ts), so tests never run a stale
 * build of the worker.
 *
 * The entry is a few lines of CommonJS run with `eval`: it silences the thread's output (captured
 * by the parent, it must never reach the protocol's stdout, and captured output that is never
 * read keeps the process alive), registers the hooks when there are any, and imports the worker.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import { workerThreads } from "../../lazy-node.js";
import { workerScripts } from "../../plugins/worker/scripts.js";
import type { PgWorkerData } from "./worker/messages.js";

const ENTRY_SOURCE = `"use strict";
process.stdout.write = process.stderr.write = () => true;
const { register } = require("node:module");
const { workerData } = require("node:worker_threads");
if (workerData.hooks) register(workerData.hooks.url, { data: workerData.hooks.data });
import(workerData.mainUrl);
`;

interface EntryData {
  mainUrl: string;
  hooks?: { url: string; data: unknown };
}

let entry: EntryData | undefined;

function entryData(): EntryData {
  if (entry) return entry;
  const compiled = new URL("./worker/main.js", import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return (entry = { mainUrl: compiled.href });
  const scripts = workerScripts();
  entry = {
    mainUrl: new URL("./worker/main.ts", import.meta.url).href,
    hooks: { url: scripts.hooksUrl, data: { ...scripts.loaderData, sucraseFrom: scripts.sucraseFrom } },
  };
  return entry;
}

export function startPgWorker(data: PgWorkerData): Worker {
  const { Worker } = workerThreads();
  return new Worker(ENTRY_SOURCE, {
    eval: true,
    workerData: { ...data, ...entryData() },
    transferList: [data.replyPort],
    // Captured, never inherited: no byte from the worker may reach the protocol's stdout.
    stdout: true,
    stderr: true,
    // The entry is CommonJS: a parent's `--input-type=module` (node -e) must not reach it.
    execArgv: [],
  });
}
