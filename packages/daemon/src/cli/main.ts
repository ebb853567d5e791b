#!/usr/bin/env node
/**
 * The `base-context` command. `serve` runs the daemon over stdio; the other commands are
 * clients of the same parts, run in-process.
 */
import { COMMANDS, usage } from "./commands.js";

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
  if (name === "serve" && servesStdio(rest)) {
    // Before anything opens a file or writes: protocol bytes must not share fd 1 with plugins.
    const { claimProtocolOutput, useProtocolOutput } = await import("../server/protocol-output.js");
    useProtocolOutput(await claimProtocolOutput());
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`base-context: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  return command.run(rest);
}

/** `serve` over stdio, not `--socket` (stdout is no protocol there) nor `--help` (printed on stdout). */
function servesStdio(args: readonly string[]): boolean {
  return !args.some((arg) => arg === "--socket" || arg.startsWith("--socket=") || arg === "--help" || arg === "-h");
}

main(process.argv.slice(2)).then(
  (code) => {
    // `serve` ends by protocol (exit notification or closed input) after releasing everything:
    // leave now, rather than wait for watchers or timers a plugin or library may still hold.
    if (process.argv[2] === "serve") process.exit(code);
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`base-context: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
