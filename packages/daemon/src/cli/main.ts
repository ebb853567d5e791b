#!/usr/bin/env node
/**
 * The `base-context` command. `serve` runs the daemon over stdio; the other commands are
 * clients of the same parts, run in-process.
 */
import { COMMANDS, usage } from "./commands.js";
import { finish, runServe } from "./serve-entry.js";

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-v") {
    const { VERSION } = await import("../version.js");
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (name === "serve") return runServe(rest);
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`base-context: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  return command.run(rest);
}

finish(main(process.argv.slice(2)), process.argv[2] === "serve");
