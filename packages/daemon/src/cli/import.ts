/**
 * `base-context import <file.jsonl> [--format f] [--cwd dir] [--json]`: a session file into the
 * database (pi's, Claude Code's or Codex's, detected from its first lines), and
 * `base-context import --all <agent>`: every session the agent keeps, new ones imported, known
 * ones brought up to date (only their new lines are read into entries).
 */
import { basename, resolve } from "node:path";
import { IMPORT_FORMATS, type ImportFormat } from "@base-context/protocol";
import { choiceOption, flag, JSON_OPTION, stringOption, UsageError, type CommandSpec } from "./args.js";
import type { Daemon } from "../daemon.js";
import { AGENT_SESSIONS, sessionFiles } from "./import-sources.js";
import { withDaemon } from "./open-daemon.js";
import { displayPath, plural, processIo, startProgress, styleFor, writeJson, type CliIo } from "./output.js";
import { checkSessionFile, toCliError } from "./messages.js";
import { CliError, runCommand } from "./run.js";

type ImportReply = Awaited<ReturnType<Daemon["sessions"]["import"]>>;

const AGENTS = AGENT_SESSIONS.map((source) => source.agent);

export const IMPORT_SPEC: CommandSpec = {
  name: "import",
  summary: "import a session file: pi's (versions 1–3), Claude Code's or Codex's; again, to add what is new",
  description:
    "The format is detected from the first lines (--format names it). Older pi versions are\n" +
    "migrated. Lines that cannot be read are skipped, as pi skips them, and reported with their\n" +
    "line numbers; everything else is imported. A file whose session is already here is brought\n" +
    "up to date: only what was appended since the last import is read and added (run it after\n" +
    "every turn); a file rewritten since is said, and nothing is added (--new-id imports a copy).\n" +
    `--all ${AGENTS.join("|")} imports every session the agent keeps (${AGENT_SESSIONS.map((s) => `${s.agent}: $${s.envVariable} or its default folder`).join("; ")}).\n` +
    "Export writes pi's format, whatever the session was imported from.",
  arguments: [{ name: "file.jsonl", description: "the session file", optional: true }],
  options: [
    { name: "format", value: "format", description: `the file's format: ${IMPORT_FORMATS.join(", ")} (default: detected)` },
    { name: "all", value: "agent", description: `import every session of this agent (${AGENTS.join(", ")}), with progress on stderr` },
    { name: "cwd", value: "dir", description: "record this folder as the session's cwd instead of the one in the file" },
    { name: "new-id", description: "give the session a new id (to import a copy of a session that is already here)" },
    JSON_OPTION,
  ],
  examples: [
    "base-context import ~/.pi/agent/sessions/…/2026-01-05_session.jsonl",
    "base-context import ~/.claude/projects/-home-me-app/5b0c….jsonl",
    "base-context import --all claude-code",
    "base-context import session.jsonl --cwd ~/src/app",
  ],
  exitStatus: "Exit status: 0 imported (also when lines were skipped), 1 nothing imported (--all: a file failed), 2 usage error.",
};

export function importCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(IMPORT_SPEC, argv, io, async (args) => {
    const format = choiceOption(args, "format", IMPORT_FORMATS);
    const agent = stringOption(args, "all");
    if (agent !== undefined) {
      if (args.arguments.length > 0) throw new UsageError("give a file or --all, not both");
      if (flag(args, "new-id") || stringOption(args, "cwd") !== undefined) throw new UsageError("--all takes no --new-id or --cwd");
      return importAll(agent, io, flag(args, "json"));
    }
    if (args.arguments.length === 0) throw new UsageError("missing <file.jsonl> (or --all <agent>)");
    const path = resolve(args.arguments[0]!);
    checkSessionFile(path, format);
    const cwdOption = stringOption(args, "cwd");
    const newId = flag(args, "new-id");

    const progress = startProgress(io, `importing ${basename(path)}`);
    const result = await withDaemon(io, (daemon) =>
      daemon.sessions.import({
        path,
        ...(format !== undefined ? { format } : {}),
        ...(newId ? { newId } : {}),
        ...(cwdOption !== undefined ? { cwd: resolve(cwdOption) } : {}),
      }),
    ).finally(() => progress.done());
    const skipped = result.skippedLines ?? [];

    if (flag(args, "json")) {
      writeJson(io, { ...result, skippedLines: skipped });
      return;
    }
    const style = styleFor(io.stdout, io.env);
    io.stdout.write(`${whatWasDone(result, basename(path), style.bold(result.session.id))}\n`);
    io.stdout.write(`  format: ${result.format ?? "pi-jsonl"}, cwd: ${displayPath(result.session.cwd)}\n`);
    if (result.warning !== undefined) io.stdout.write(`${style.yellow(result.warning)}\n`);
    const ignored = Object.entries(result.ignoredLines ?? {});
    if (ignored.length > 0) io.stdout.write(`  not conversation, skipped: ${ignored.map(([type, count]) => `${count} ${type}`).join(", ")}\n`);
    if (skipped.length > 0) {
      io.stdout.write(`${style.yellow(`Skipped ${plural(skipped.length, "line")} that could not be read:`)}\n`);
      for (const line of skipped) io.stdout.write(`  line ${line.line}: ${line.reason}\n`);
    }
    io.stdout.write(`${style.dim(`See its context with: base-context show ${result.session.id}`)}\n`);
    if (result.updated) io.stdout.write(`${style.dim(`To import the file as a separate copy: base-context import ${args.arguments[0]} --new-id`)}\n`);
  });
}

/** "Imported 69 entries from x.jsonl into session …", "Added 3 new entries from …", "x.jsonl: nothing new …". */
function whatWasDone(result: ImportReply, file: string, session: string): string {
  const name = result.session.name !== undefined ? ` "${result.session.name}"` : "";
  if (!result.updated) return `Imported ${plural(result.entryCount, "entry", "entries")} from ${file} into session ${session}${name}`;
  const added = result.addedEntries ?? 0;
  if (added > 0) return `Added ${plural(added, "new entry", "new entries")} from ${file} to session ${session}${name}, imported before`;
  if (result.rewritten === true) return `Nothing added from ${file} to session ${session}${name}, imported before: the file was rewritten`;
  return `Nothing new in ${file}: session ${session}${name}, imported before, is up to date`;
}

interface FileOutcome {
  path: string;
  result?: ImportReply;
  error?: string;
}

async function importAll(agent: string, io: CliIo, json: boolean): Promise<number> {
  const source = AGENT_SESSIONS.find((candidate) => candidate.agent === agent);
  if (source === undefined) throw new UsageError(`--all takes one of ${AGENTS.join(", ")}, not "${agent}"`);
  const folder = source.folder(io.env);
  let files: string[];
  try {
    files = sessionFiles(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      throw new CliError(`no ${agent} sessions: ${displayPath(folder)} does not exist`, [`Set ${source.envVariable} if ${agent} keeps its files elsewhere.`]);
    }
    throw new CliError(`cannot read ${displayPath(folder)}: ${(error as Error).message}`);
  }
  const outcomes: FileOutcome[] = [];
  const progress = startProgress(io, `importing ${plural(files.length, "file")} from ${displayPath(folder)}`);
  const tty = io.stderr.isTTY === true;
  await withDaemon(io, async (daemon) => {
    for (const [index, path] of files.entries()) {
      const shown = path.slice(folder.length + 1);
      progress.update(`[${index + 1}/${files.length}] ${shown}`);
      const outcome = await importOne(daemon, path, source.format);
      outcomes.push(outcome);
      if (!tty && !json) io.stderr.write(`[${index + 1}/${files.length}] ${shown}: ${describe(outcome)}\n`);
    }
  }).finally(() => progress.done());
  const failed = outcomes.filter((outcome) => outcome.error !== undefined);
  if (json) {
    writeJson(io, {
      folder,
      files: outcomes.map(({ path, result, error }) =>
        error !== undefined
          ? { path, error }
          : {
              path,
              sessionId: result!.session.id,
              updated: result!.updated === true,
              addedEntries: result!.addedEntries ?? 0,
              entryCount: result!.entryCount,
              skippedLines: result!.skippedLines?.length ?? 0,
            },
      ),
    });
    return failed.length > 0 ? 1 : 0;
  }
  const created = outcomes.filter((outcome) => outcome.result !== undefined && outcome.result.updated !== true).length;
  const updated = outcomes.filter((outcome) => outcome.result?.updated === true && (outcome.result.addedEntries ?? 0) > 0).length;
  const unchanged = outcomes.filter((outcome) => outcome.result?.updated === true && (outcome.result.addedEntries ?? 0) === 0).length;
  const added = outcomes.reduce((sum, outcome) => sum + (outcome.result?.addedEntries ?? 0), 0);
  io.stdout.write(
    `${plural(files.length, `${agent} session file`)} in ${displayPath(folder)}: ${created} imported, ${updated} updated, ${unchanged} unchanged` +
      `${failed.length > 0 ? `, ${failed.length} failed` : ""} (${plural(added, "entry", "entries")} added)\n`,
  );
  for (const outcome of failed) io.stdout.write(`  ${outcome.path}: ${outcome.error}\n`);
  return failed.length > 0 ? 1 : 0;
}

async function importOne(daemon: Daemon, path: string, format: ImportFormat): Promise<FileOutcome> {
  try {
    return { path, result: await daemon.sessions.import({ path, format }) };
  } catch (error) {
    return { path, error: toCliError(error).message };
  }
}

function describe(outcome: FileOutcome): string {
  if (outcome.error !== undefined) return `failed: ${outcome.error}`;
  const result = outcome.result!;
  if (result.updated === true) return (result.addedEntries ?? 0) > 0 ? `${plural(result.addedEntries ?? 0, "new entry", "new entries")}` : "unchanged";
  return `imported, ${plural(result.entryCount, "entry", "entries")}`;
}
