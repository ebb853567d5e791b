/**
 * The daemon's entry point: `base-context serve …` runs it (bin/base-context.js loads its bundle
 * through cli/code-cache.ts), so a daemon loads what serving needs and none of the CLI's other
 * commands. The bundle runs nothing when loaded: the loader calls `serveMain`.
 */
import { finish, runServe, type ServeHooks } from "./serve-entry.js";

export type { ServeHooks };

/** Serves with the command's arguments (those after `serve`) and exits when serving ends. */
export function serveMain(args: string[], hooks: ServeHooks = {}): void {
  finish(runServe(args, hooks), true);
}
