/**
 * Where a plugin worker's code comes from.
 *
 * A worker starts from a three-line CommonJS stub (`eval: true`, so no file has to be found):
 * it registers the loader hooks, then imports the bootstrap. Every other worker module is loaded
 * through those hooks, which can load TypeScript. So the only file that must already be
 * JavaScript is the loader-hooks module itself:
 * - from the compiled daemon (dist/), every module is `.js` and is used as is;
 * - from TypeScript sources (the test runner), `loader-hooks.ts` is type-stripped here once and
 *   passed as a data: URL; the bootstrap and the SDK module are then loaded as `.ts` through
 *   the hooks, so tests never run a stale build of the daemon. The packages they import
 *   (`@base-context/core`, `@base-context/protocol`) resolve to their builds, as everywhere.
 * Every worker also gets a MessagePort to the daemon's transpiler (`workerData.transpiler`).
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { stripTypes } from "../transpiler.js";
import type { LoaderData } from "./loader-hooks.js";

export interface WorkerScripts {
  /** CommonJS source of the worker's entry, for `new Worker(source, { eval: true })`. */
  entrySource: string;
  /** CommonJS source of a plugin process's entry (`node -e`); its first argument is these scripts as JSON. */
  processEntrySource: string;
  hooksUrl: string;
  bootstrapUrl: string;
  /** A module of the daemon that sucrase resolves from (for plugin processes). */
  sucraseFrom: string;
  loaderData: LoaderData;
}

/** Reads `workerData.scripts`, and hands the transpiler port on to the hooks. */
const ENTRY_SOURCE = `"use strict";
const { register } = require("node:module");
const { workerData } = require("node:worker_threads");
const { scripts, transpiler } = workerData;
register(scripts.hooksUrl, { data: { ...scripts.loaderData, transpiler }, transferList: [transpiler] });
import(scripts.bootstrapUrl);
`;

/** The same for a plugin process: no daemon thread to ask for TypeScript, sucrase is used in place. */
const PROCESS_ENTRY_SOURCE = `"use strict";
const { register } = require("node:module");
const scripts = JSON.parse(process.argv[1]);
register(scripts.hooksUrl, { data: { ...scripts.loaderData, sucraseFrom: scripts.sucraseFrom } });
import(scripts.bootstrapUrl);
`;

/** Packages the daemon lends to plugins that do not install their own. */
const LENT_PACKAGES = ["openai"] as const;

let cached: WorkerScripts | undefined;

/** A sibling module of this file, as the compiled `.js` when there is one, else the `.ts` source. */
function moduleUrl(name: string): URL {
  const compiled = new URL(`./${name}.js`, import.meta.url);
  return existsSync(fileURLToPath(compiled)) ? compiled : new URL(`./${name}.ts`, import.meta.url);
}

function hooksModuleUrl(): string {
  const url = moduleUrl("loader-hooks");
  if (url.pathname.endsWith(".js")) return url.href;
  const code = stripTypes(readFileSync(url, "utf8"), fileURLToPath(url));
  return `data:text/javascript;base64,${Buffer.from(code).toString("base64")}`;
}

export function workerScripts(): WorkerScripts {
  cached ??= {
    entrySource: ENTRY_SOURCE,
    processEntrySource: PROCESS_ENTRY_SOURCE,
    hooksUrl: hooksModuleUrl(),
    bootstrapUrl: moduleUrl("bootstrap").href,
    sucraseFrom: import.meta.url,
    loaderData: {
      sdkUrl: moduleUrl("sdk-shim").href,
      lendFromUrl: import.meta.url,
      lentPackages: [...LENT_PACKAGES],
    },
  };
  return cached;
}
