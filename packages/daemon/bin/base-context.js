#!/usr/bin/env node
// The `base-context` command. A file of its own rather than a file in dist/: package managers
// link a package's bin when they install it, and in this workspace that happens before `prepare`
// builds dist (a bin pointing into dist could not be linked yet). This file always exists.
//
// It runs the bundles the build makes (docs/architecture.md#start-path-and-bundles): `serve` the
// daemon's (through its loader, serve.cjs); help and version the smallest; any other command the
// CLI's. Each is one file, so a start reads and compiles one module instead of a few hundred.
// CommonJS (bin/package.json): `serve` then never starts Node's ES module loader, which a fresh
// process pays for in CPU before its first reply.
"use strict";
const command = process.argv[2];
if (command === "serve") {
  require("../dist/bundle/serve.cjs");
} else {
  const HELP = [undefined, "--help", "-h", "help", "--version", "-v"];
  import(HELP.includes(command) ? "../dist/bundle/help.js" : "../dist/bundle/cli.js");
}
