/** `base-context export <session> [-o file] [--force] [--json]`: a session as a pi JSONL file. */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { flag, JSON_OPTION, stringOption, type CommandSpec } from "./args.js";
import { withDaemon } from "./open-daemon.js";
import { plural, processIo, styleFor, writeJson, type CliIo } from "./output.js";
import { shellPath } from "./plugins-output.js";
import { CliError, runCommand } from "./run.js";
import { resolveSessionId } from "./session-ref.js";

export const EXPORT_SPEC: CommandSpec = {
  name: "export",
  summary: "write a session as a pi JSONL file (or to stdout)",
  description:
    "The header line, then every entry. pi opens a file at its last line, so the session's current\n" +
    "position is written last (after a navigation the entries are reordered, parents still before\n" +
    "children); when it cannot be last (it has later entries under it), a warning says so.\n" +
    "Sessions imported from Claude Code or Codex are written in pi's format too (the only one written).",
  arguments: [{ name: "session", description: "session id (or a unique start of it, at least 4 characters)" }],
  options: [
    { name: "output", short: "o", value: "file", description: "write to this file instead of stdout" },
    { name: "force", description: "replace the file if it exists" },
    JSON_OPTION,
  ],
  examples: ["base-context export 5b0c > session.jsonl", "base-context export 5b0c -o session.jsonl"],
};

export function exportCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(EXPORT_SPEC, argv, io, async (args) => {
    const output = stringOption(args, "output");
    const path = output !== undefined ? resolve(output) : undefined;
    if (path !== undefined && existsSync(path) && !flag(args, "force")) {
      throw new CliError(`${path} exists`, ["Add --force to replace it, or choose another file."]);
    }
    if (path !== undefined && !existsSync(dirname(path))) {
      throw new CliError(`cannot write ${path}: its folder ${dirname(path)} does not exist`, [`Create it first: mkdir -p ${shellPath(dirname(path))}`]);
    }
    const exported = await withDaemon(io, async (daemon) => {
      const sessionId = await resolveSessionId(daemon, args.arguments[0]!);
      const { entryCount } = await daemon.sessions.get({ sessionId });
      const result = await daemon.sessions.export({ sessionId, format: "pi-jsonl", ...(path !== undefined ? { path } : {}) });
      return { sessionId, entryCount, ...result };
    });

    if (exported.warning !== undefined && !flag(args, "json")) {
      io.stderr.write(`${styleFor(io.stderr, io.env).yellow("warning:")} ${exported.warning}\n`);
    }
    if (flag(args, "json")) {
      writeJson(io, exported);
    } else if (path === undefined) {
      io.stdout.write(exported.content ?? "");
    } else {
      io.stdout.write(`Exported session ${exported.sessionId} (${plural(exported.entryCount, "entry", "entries")}) to ${path}\n`);
    }
  });
}
