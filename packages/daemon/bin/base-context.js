#!/usr/bin/env node
// The `base-context` command. A file of its own rather than a file in dist/: package managers
// link a package's bin when they install it, and in this workspace that happens before `prepare`
// builds dist (a bin pointing into dist could not be linked yet). This file always exists.
//
// It runs the bundles the build makes (docs/architecture.md#start-path-and-bundles): `serve` the
// daemon's (through its loader, serve.cjs), `claude-code hook` the hook's (hook.cjs); help and
// version the smallest; any other command the CLI's. Each is one file, so a start reads and
// compiles one module instead of a few hundred.
// CommonJS (bin/package.json): `serve` then never starts Node's ES module loader, which a fresh
// process pays for in CPU before its first reply.
"use strict";
const command = process.argv[2];

// better-sqlite3's native addon loads only into the Node it was built for: a clone installed with
// Node 20 and run by an app under Node 24 (the Agents SDK's) would fail at its first database use.
// The build records which Node loaded the addon (scripts/record-addon-node.mjs); under another Node
// the command runs itself again under that one, same process (execve). BASE_CONTEXT_REEXEC=off: never.
const addonNode = (() => {
  if (process.env.BASE_CONTEXT_REEXEC === "off") return undefined;
  const fs = require("node:fs");
  try {
    const record = JSON.parse(fs.readFileSync(`${__dirname}/../node_modules/.cache/base-context/addon-node.json`, "utf8"));
    if (record.abi === process.versions.modules) return undefined;
    // The addon recorded is still the one installed (a rebuild since would have changed it).
    const addon = fs.statSync(record.addon);
    return addon.size === record.size && addon.mtimeMs === record.mtimeMs && fs.existsSync(record.execPath) ? record : undefined;
  } catch {
    return undefined;
  }
})();
if (addonNode) {
  const args = [addonNode.execPath, ...process.execArgv, __filename, ...process.argv.slice(2)];
  const env = { ...process.env, BASE_CONTEXT_REEXEC: "off" };
  if (typeof process.execve === "function") process.execve(addonNode.execPath, args, env);
  // Node before 22.15 has no execve: a child with the same stdio, its signals and exit passed on.
  const child = require("node:child_process").spawn(addonNode.execPath, args.slice(1), { stdio: "inherit", env });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    if (code !== null || !signal) process.exit(code ?? 1);
    // Die of the same signal: without the handler above, which would only pass it on again.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
} else if (command === "serve") {
  require("../dist/bundle/serve.cjs");
} else if (command === "claude-code" && process.argv[3] === "hook") {
  // Claude Code waits for it at every compaction: a bundle of its own, from its code cache as serve's.
  require("../dist/bundle/hook.cjs");
} else {
  const HELP = [undefined, "--help", "-h", "help", "--version", "-v"];
  import(HELP.includes(command) ? "../dist/bundle/help.js" : "../dist/bundle/cli.js");
}
