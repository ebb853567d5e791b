/**
 * Starting `base-context serve`, shared by the CLI (`cli/main.ts`) and the daemon's own entry
 * point (`cli/serve-main.ts`, the bundle a client's `base-context serve` runs).
 */

import { claimProtocolOutput, useProtocolOutput } from "../server/protocol-output.js";

/** Runs `serve` with its arguments (those after the command name). */
export async function runServe(args: string[]): Promise<number> {
  // Claimed before anything writes: protocol bytes must not share fd 1 with plugins. When fd 1 is
  // a socket (Node clients' pipes), claiming it waits for a helper process: the serving code loads
  // meanwhile instead of after it (loading it writes nothing to fd 1 and starts no plugin).
  // The claim starts that process synchronously, while this process is still small (a fork of a
  // grown heap costs more).
  const claimed = servesStdio(args) ? claimProtocolOutput().then(useProtocolOutput) : undefined;
  const serving = import("./serve.js");
  const stdio = claimed === undefined ? undefined : import("../server/serve-stdio.js");
  await Promise.all([claimed, stdio]);
  return (await serving).serveCommand(args);
}

/** `serve` over stdio, not `--socket` (stdout is no protocol there) nor `--help` (printed on stdout). */
function servesStdio(args: readonly string[]): boolean {
  return !args.some((arg) => arg === "--socket" || arg.startsWith("--socket=") || arg === "--help" || arg === "-h");
}

/** Ends the process with a command's exit code, or reports what it threw. */
export function finish(run: Promise<number>, serving: boolean): void {
  run.then(
    (code) => {
      // `serve` ends by protocol (exit notification or closed input) after releasing everything:
      // leave now, rather than wait for watchers or timers a plugin or library may still hold.
      if (serving) process.exit(code);
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`base-context: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
