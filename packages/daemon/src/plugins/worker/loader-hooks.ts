/**
 * Module loader hooks registered inside every plugin worker (node:module `register`, which runs
 * them on a helper thread of that worker). They let a plugin be written the way an author would
 * try an idea, with no build step and no install:
 * - `.ts` / `.mts` files are type-stripped by the daemon (asked over a MessagePort, see
 *   ../transpiler.ts); `./x.js` finds `./x.ts` as TypeScript projects write it;
 * - `@base-context/plugin-sdk` always resolves to the host's SDK module, so a plugin copied into
 *   a plugins folder needs no node_modules and runs the same helpers the daemon uses;
 * - a few packages the daemon ships (`openai`) are lent to plugins that do not bring their own.
 *
 * It runs on Node's hooks thread, apart from the daemon's modules: it imports Node's built-ins
 * only (and types).
 */
import { readFile } from "node:fs/promises";
import { createRequire, type InitializeHook, type LoadHook, type ResolveHook } from "node:module";
import { fileURLToPath } from "node:url";
import type { MessagePort } from "node:worker_threads";
import type { Reply } from "../../worker-messages.js";
import type { TranspileRequest } from "../transpiler.js";

export interface LoaderData {
  sdkUrl: string;
  /** Where lent packages resolve from (a module of the daemon). */
  lendFromUrl: string;
  lentPackages: readonly string[];
  /** To the daemon's transpiler; added by the worker entry (a port cannot be shared between workers). */
  transpiler?: MessagePort;
  /**
   * In a plugin process there is no daemon thread to ask: TypeScript is stripped here, with the
   * daemon's sucrase, required from this module of the daemon.
   */
  sucraseFrom?: string;
}

const SDK_SPECIFIER = "@base-context/plugin-sdk";
const TYPESCRIPT_FILE = /\.(?:ts|mts)$/;

let data: LoaderData;
const pending = new Map<number, { resolve(code: string): void; reject(error: Error): void }>();
let nextRequest = 1;

export const initialize: InitializeHook<LoaderData> = (received) => {
  data = received;
  data.transpiler?.on("message", (reply: Reply<string>) => {
    const request = pending.get(reply.requestId);
    pending.delete(reply.requestId);
    if (reply.error !== undefined) request?.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
    else request?.resolve(reply.value ?? "");
  });
};

type Transform = (code: string, options: Record<string, unknown>) => { code: string };
let localTransform: Transform | undefined;

async function transpileHere(path: string, from: string): Promise<string> {
  localTransform ??= (createRequire(from)("sucrase") as { transform: Transform }).transform;
  // The same options as the daemon's transpiler (../transpiler.ts).
  return localTransform(await readFile(path, "utf8"), { transforms: ["typescript"], filePath: path, disableESTransforms: true }).code;
}

function transpile(path: string): Promise<string> {
  if (data.sucraseFrom !== undefined) return transpileHere(path, data.sucraseFrom);
  const port = data.transpiler;
  if (port === undefined) return Promise.reject(new Error(`cannot load ${path}: no TypeScript transpiler`));
  const requestId = nextRequest++;
  return new Promise((resolve, reject) => {
    pending.set(requestId, { resolve, reject });
    port.postMessage({ t: "transpile", requestId, path } satisfies TranspileRequest);
  });
}

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "ERR_UNSUPPORTED_DIR_IMPORT";
}

function isRelative(specifier: string): boolean {
  return specifier.startsWith("./") || specifier.startsWith("../");
}

/** TypeScript spellings of a relative specifier that did not resolve as written. */
function typescriptAlternatives(specifier: string): string[] {
  if (specifier.endsWith(".js")) return [`${specifier.slice(0, -3)}.ts`];
  if (specifier.endsWith(".mjs")) return [`${specifier.slice(0, -4)}.mts`];
  if (!/\.[cm]?[jt]s$/.test(specifier)) return [`${specifier}.ts`, `${specifier}/index.ts`];
  return [];
}

function isLent(specifier: string): boolean {
  return data.lentPackages.some((name) => specifier === name || specifier.startsWith(`${name}/`));
}

export const resolve: ResolveHook = async (specifier, context, next) => {
  if (specifier === SDK_SPECIFIER) return { url: data.sdkUrl, shortCircuit: true };
  try {
    return await next(specifier, context);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    if (isRelative(specifier)) {
      for (const alternative of typescriptAlternatives(specifier)) {
        try {
          return await next(alternative, context);
        } catch (retryError) {
          if (!isNotFound(retryError)) throw retryError;
        }
      }
    } else if (isLent(specifier)) {
      return next(specifier, { ...context, parentURL: data.lendFromUrl });
    }
    throw error;
  }
};

export const load: LoadHook = async (url, context, next) => {
  if (!url.startsWith("file:") || !TYPESCRIPT_FILE.test(url)) return next(url, context);
  return { format: "module", source: await transpile(fileURLToPath(url)), shortCircuit: true };
};
