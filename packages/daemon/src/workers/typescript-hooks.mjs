// Module loader hooks for a worker run from the daemon's TypeScript sources (the test runner):
// Node 20 cannot strip types, so workers/start-worker.ts starts such a worker with
// `--import register-typescript.mjs`, which registers these. They type-strip `.ts` files with
// sucrase (the daemon's transpiler's options, plugins/transpiler.ts) and find `./x.ts` for an
// import of `./x.js`, as the compiled build does. JavaScript, so that no build is needed to load
// them; never used by the built daemon (dist/ and its bundles are JavaScript already).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const TYPESCRIPT_FILE = /\.(?:ts|mts)$/;
let transform;

function isNotFound(error) {
  return error?.code === "ERR_MODULE_NOT_FOUND";
}

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    const relative = specifier.startsWith("./") || specifier.startsWith("../");
    if (!isNotFound(error) || !relative || !specifier.endsWith(".js")) throw error;
    return next(`${specifier.slice(0, -3)}.ts`, context);
  }
}

export async function load(url, context, next) {
  if (!url.startsWith("file:") || !TYPESCRIPT_FILE.test(url)) return next(url, context);
  transform ??= createRequire(import.meta.url)("sucrase").transform;
  const path = fileURLToPath(url);
  const source = transform(await readFile(path, "utf8"), { transforms: ["typescript"], filePath: path, disableESTransforms: true }).code;
  return { format: "module", source, shortCircuit: true };
}
