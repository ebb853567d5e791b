/**
 * The Claude Code hook's entry point: `base-context claude-code hook …` runs it (bin/base-context.js
 * loads its bundle through cli/code-cache.ts, as `serve` loads the daemon's), because Claude Code
 * waits for the hook at every compaction and compiling the whole CLI's bundle was most of a run
 * that had one new turn to import. The bundle runs nothing when loaded: the loader calls `hookMain`.
 */
import { claudeCodeCommand } from "./claude-code.js";
import { finish } from "./serve-entry.js";

/** Runs `claude-code` with its arguments (those after `claude-code`: `hook`…); `onEnded` once it has answered. */
export function hookMain(args: string[], onEnded: () => void): void {
  finish(claudeCodeCommand(args).finally(onEnded), false);
}
