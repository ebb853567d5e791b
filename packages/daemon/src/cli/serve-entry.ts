/**
 * Starting `base-context serve`, shared by the CLI (`cli/main.ts`) and the daemon's own entry
 * point (`cli/serve-main.ts`, the bundle a client's `base-context serve` runs).
 */

import { claimProtocolOutput } from "../server/protocol-output.js";

/** What the loader of the daemon's bundle may ask of a serving daemon. */
export interface ServeHooks {
  /** Told of the daemon's quiet moments over stdio, and whether it had served a request by then (server/serve-stdio.ts). */
  onQuiet?: (served: boolean) => void;
}

/** Runs `serve` with its arguments (those after the command name). */
export async function runServe(args: string[], hooks: ServeHooks = {}): Promise<number> {
  // Claimed before anything writes: protocol bytes must not share fd 1 with plugins. Over a socket
  // (Node clients' pipes) the protocol starts on fd 1 and moves to its own descriptor later, before
  // any plugin loads (server/protocol-output.ts).
  const stdio = servesStdio(args);
  if (stdio) claimProtocolOutput();
  const serving = import("./serve.js");
  if (stdio && hooks.onQuiet !== undefined) (await import("../server/serve-stdio.js")).onQuietMoments(hooks.onQuiet);
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
