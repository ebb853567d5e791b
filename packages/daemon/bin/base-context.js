#!/usr/bin/env node
// The `base-context` command. A file of its own rather than a file in dist/: package managers
// link a package's bin when they install it, and in this workspace that happens before `prepare`
// builds dist (a bin pointing into dist could not be linked yet). This file always exists.
//
// It runs the bundles the build makes (docs/architecture.md#start-path-and-bundles): `serve` the
// daemon's, compiled with V8's code cache by dist/bundle/serve-loader.cjs; help and version the
// smallest; any other command the CLI's. Each is one file, so a start reads and compiles one
// module instead of a few hundred. CommonJS (bin/package.json): `serve` then never starts Node's
// ES module loader, which costs a fresh process ~8 ms of CPU.
"use strict";
const command = process.argv[2];
if (command === "serve") {
  // V8's young generation starts small (1 MB per semi-space) and doubles after a scavenge that
  // kept much: a start and its first request scavenged five times as it grew, each copying the
  // live code and schemas again (~3 ms each here). Growing it eightfold instead takes the first
  // request's path down to three, for ~15 MB more memory at most (docs/architecture.md#start-path-and-bundles).
  // Set before the bundle is compiled: V8's flags are part of what the code cache must match. An
  // explicit choice (NODE_OPTIONS or node's own arguments) wins.
  if (![...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((arg) => arg.includes("semi-space"))) {
    require("node:v8").setFlagsFromString("--semi-space-growth-factor=8");
  }
  require("../dist/bundle/serve-loader.cjs").serveBundle(require.resolve("../dist/bundle/daemon.cjs"), process.argv.slice(3));
} else {
  const HELP = [undefined, "--help", "-h", "help", "--version", "-v"];
  import(HELP.includes(command) ? "../dist/bundle/help.js" : "../dist/bundle/cli.js");
}
