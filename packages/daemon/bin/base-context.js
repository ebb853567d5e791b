#!/usr/bin/env node
// The `base-context` command. A file of its own rather than a file in dist/: package managers
// link a package's bin when they install it, and in this workspace that happens before `prepare`
// builds dist (a bin pointing into dist could not be linked yet). This file always exists.
//
// It runs the bundles the build makes (docs/architecture.md#start-path-and-bundles): `serve` the
// daemon's (CommonJS, compiled with V8's code cache by dist/cli/code-cache.js), help and version
// the smallest, any other command the CLI's. Each is one file, so a start reads and compiles one
// module instead of a few hundred.
const HELP = [undefined, "--help", "-h", "help", "--version", "-v"];
const command = process.argv[2];
if (command === "serve") {
  const { serveBundle } = await import("../dist/cli/code-cache.js");
  serveBundle(new URL("../dist/bundle/daemon.cjs", import.meta.url), process.argv.slice(3));
} else {
  await import(HELP.includes(command) ? "../dist/bundle/help.js" : "../dist/bundle/cli.js");
}
