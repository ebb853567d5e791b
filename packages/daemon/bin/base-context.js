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
  require("../dist/bundle/serve-loader.cjs").serveBundle(require.resolve("../dist/bundle/daemon.cjs"), process.argv.slice(3));
} else {
  const HELP = [undefined, "--help", "-h", "help", "--version", "-v"];
  import(HELP.includes(command) ? "../dist/bundle/help.js" : "../dist/bundle/cli.js");
}
