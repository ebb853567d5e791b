#!/usr/bin/env node
/**
 * The entry point of `base-context`, `--help` and `--version` (bin/base-context.js picks it): a
 * bundle of its own that loads no command, so the answer is as quick as Node's own start.
 */
import { VERSION } from "../version.js";
import { usage } from "./usage.js";

const [name] = process.argv.slice(2);
if (name === "--version" || name === "-v") {
  process.stdout.write(`${VERSION}\n`);
} else {
  process.stdout.write(usage());
  // Without a command it is a usage error (exit 2); asked for, the help is an answer (exit 0).
  process.exitCode = name === undefined ? 2 : 0;
}
