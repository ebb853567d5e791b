/**
 * Where a plugin's code is loaded from. A plugin worker (a thread or, with `plugins.isolation:
 * "process"`, a process) runs the daemon's one worker entry (workers/start-worker.ts) as kind
 * "plugin": the bootstrap (bootstrap.ts) registers the loader hooks (loader-hooks.ts) with these
 * scripts, then loads the plugin through them. The hooks and the SDK module the plugins resolve
 * `@base-context/plugin-sdk` to are modules of their own, found beside this file: compiled `.js`
 * in the built daemon (the bundles find dist/ beside them), `.ts` in the sources (the test
 * runner, whose workers strip types: workers/register-typescript.mjs). The packages they import
 * (`@base-context/core`, `@base-context/protocol`) resolve to their builds, as everywhere.
 * A worker thread also gets a MessagePort to the daemon's transpiler (`workerData.transpiler`).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { LoaderData } from "./loader-hooks.js";

export interface WorkerScripts {
  hooksUrl: string;
  /** A module of the daemon that sucrase resolves from (for plugin processes). */
  sucraseFrom: string;
  loaderData: LoaderData;
}

/** Packages the daemon lends to plugins that do not install their own. */
const LENT_PACKAGES = ["openai"] as const;

let cached: WorkerScripts | undefined;

/** A sibling module of this file, as the compiled `.js` when there is one, else the `.ts` source. */
function moduleUrl(name: string): URL {
  const compiled = new URL(`./${name}.js`, import.meta.url);
  return existsSync(fileURLToPath(compiled)) ? compiled : new URL(`./${name}.ts`, import.meta.url);
}

export function workerScripts(): WorkerScripts {
  cached ??= {
    hooksUrl: moduleUrl("loader-hooks").href,
    sucraseFrom: import.meta.url,
    loaderData: {
      sdkUrl: moduleUrl("sdk-shim").href,
      lendFromUrl: import.meta.url,
      lentPackages: [...LENT_PACKAGES],
    },
  };
  return cached;
}
