// Where the benches find the built packages, and packages only the daemon depends on.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const daemonPackage = join(repoRoot, "packages", "daemon");

/** The daemon's CLI entry point (`base-context`). */
export const daemonMain = join(daemonPackage, "dist", "cli", "main.js");

/** Imports a module of the built daemon package, e.g. `daemonModule("tokens/index.js")`. */
export function daemonModule(path) {
  const file = join(daemonPackage, "dist", path);
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`pnpm build\` first`);
  return import(pathToFileURL(file).href);
}

/**
 * Imports a test fixture of the daemon the benches reuse (e.g. `fixtureModule("tokens/fixtures/corpus.js")`).
 * Fixtures never ship in dist/: `pnpm bench` compiles them into dist-bench/ (packages/daemon/tsconfig.bench.json).
 */
export function fixtureModule(path) {
  const file = join(daemonPackage, "dist-bench", path);
  if (!existsSync(file)) {
    throw new Error(`${file} is missing: run \`pnpm bench\` (or \`tsc -p packages/daemon/tsconfig.bench.json\`) first`);
  }
  return import(pathToFileURL(file).href);
}

/** Imports the built core package (the pure rules), `packages/core/dist/index.js`. */
export function coreModule() {
  const file = join(repoRoot, "packages", "core", "dist", "index.js");
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`pnpm build\` first`);
  return import(pathToFileURL(file).href);
}

/** Imports the built protocol package (its client). */
export function protocolModule() {
  return import(pathToFileURL(join(repoRoot, "packages", "protocol", "dist", "index.js")).href);
}

/**
 * `require` as the daemon package sees it: gpt-tokenizer is its dependency, js-tiktoken (the
 * reference the tokenizer is checked against) its dev dependency, installed in the workspace.
 */
export const requireFromDaemon = createRequire(join(daemonPackage, "package.json"));

/** The installed `base-context` command (what a client spawns): runs whatever the build ships. */
export const daemonBin = join(daemonPackage, "bin", "base-context.js");
