#!/usr/bin/env node
// Records which Node loads better-sqlite3's native addon (run by the root `build` script, so by
// `pnpm install` too): a native addon loads only into the Node ABI it was built for, and the
// `base-context` command (packages/daemon/bin/base-context.js) runs itself again under this Node
// when it is started by another (an Agents SDK app under Node 24 on a clone installed with Node 20).
//
// The record is written only when the addon loads here, into packages/daemon/node_modules/.cache/
// (never packed, never committed), with the addon's size and time so that a rebuild since is seen.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const daemon = join(dirname(fileURLToPath(import.meta.url)), "..", "packages", "daemon");
const requireFromDaemon = createRequire(join(daemon, "package.json"));
const addon = join(dirname(requireFromDaemon.resolve("better-sqlite3/package.json")), "build", "Release", "better_sqlite3.node");

try {
  const Database = requireFromDaemon("better-sqlite3");
  new Database(":memory:").close();
} catch (error) {
  // Built for another Node (or not built): the record of the Node that built it, if any, stays.
  process.stderr.write(`record-addon-node: better-sqlite3 does not load under Node ${process.version}, nothing recorded (${String(error?.message ?? error).split("\n")[0]})\n`);
  process.exit(0);
}
const { size, mtimeMs } = statSync(addon);
const record = { execPath: process.execPath, version: process.version, abi: process.versions.modules, addon, size, mtimeMs };
const folder = join(daemon, "node_modules", ".cache", "base-context");
mkdirSync(folder, { recursive: true });
writeFileSync(join(folder, "addon-node.json"), `${JSON.stringify(record, null, 2)}\n`);
