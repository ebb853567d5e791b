/** `base-context import <file.jsonl> [--cwd dir] [--json]`: a pi session file into the database. */
import { basename, resolve } from "node:path";
import { flag, JSON_OPTION, stringOption, type CommandSpec } from "./args.js";
import { withDaemon } from "./open-daemon.js";
import { displayPath, plural, processIo, startProgress, styleFor, writeJson, type CliIo } from "./output.js";
import { checkSessionFile } from "./messages.js";
import { runCommand } from "./run.js";

export const IMPORT_SPEC: CommandSpec = {
  name: "import",
  summary: "import a pi session file (JSONL, format versions 1–3)",
  description:
    "Older versions are migrated. Lines that cannot be read are skipped, as pi skips them, and\n" +
    "reported with their line numbers; everything else is imported.",
  arguments: [{ name: "file.jsonl", description: "the session file" }],
  options: [
    { name: "cwd", value: "dir", description: "record this folder as the session's cwd instead of the one in the file" },
    { name: "new-id", description: "give the session a new id (to import a copy of a session that is already here)" },
    JSON_OPTION,
  ],
  examples: ["base-context import ~/.pi/agent/sessions/…/2026-01-05_session.jsonl", "base-context import session.jsonl --cwd ~/src/app"],
  exitStatus: "Exit status: 0 imported (also when lines were skipped), 1 nothing imported, 2 usage error.",
};

export function importCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(IMPORT_SPEC, argv, io, async (args) => {
    const path = resolve(args.arguments[0]!);
    checkSessionFile(path);
    const cwdOption = stringOption(args, "cwd");
    const newId = flag(args, "new-id");

    const progress = startProgress(io, `importing ${basename(path)}`);
    const result = await withDaemon(io, (daemon) =>
      daemon.sessions.import({
        format: "pi-jsonl",
        path,
        ...(newId ? { newId } : {}),
        ...(cwdOption !== undefined ? { cwd: resolve(cwdOption) } : {}),
      }),
    ).finally(() => progress.done());
    const skipped = result.skippedLines ?? [];

    if (flag(args, "json")) {
      writeJson(io, { session: result.session, entryCount: result.entryCount, skippedLines: skipped });
      return;
    }
    const style = styleFor(io.stdout, io.env);
    const name = result.session.name !== undefined ? ` "${result.session.name}"` : "";
    io.stdout.write(
      `Imported ${plural(result.entryCount, "entry", "entries")} from ${basename(path)} into session ${style.bold(result.session.id)}${name}\n`,
    );
    io.stdout.write(`  cwd: ${displayPath(result.session.cwd)}\n`);
    if (skipped.length > 0) {
      io.stdout.write(`${style.yellow(`Skipped ${plural(skipped.length, "line")} that could not be read:`)}\n`);
      for (const line of skipped) io.stdout.write(`  line ${line.line}: ${line.reason}\n`);
    }
    io.stdout.write(`${style.dim(`See its context with: base-context show ${result.session.id}`)}\n`);
  });
}
