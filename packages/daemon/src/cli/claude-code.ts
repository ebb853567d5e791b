/**
 * `base-context claude-code install|uninstall|status|hook`: Base Context's hooks in Claude Code
 * (docs/claude-code.md). `install` writes the three hook entries (PreCompact, SessionStart after a
 * compaction, PostCompact) into Claude Code's settings, `uninstall` removes them, `status` says
 * where they are, and `hook` is what those entries run.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { flag, JSON_OPTION, stringOption, UsageError, type CommandSpec } from "./args.js";
import {
  claudeSettingsPath,
  HOOK_EVENTS,
  installedHooks,
  isOurCommand,
  readClaudeSettings,
  withoutOurHooks,
  withOurHooks,
  writeClaudeSettings,
} from "./claude-code-settings.js";
import { displayPath, processIo, styleFor, writeJson, type CliIo } from "./output.js";
import { runCommand } from "./run.js";

export const CLAUDE_CODE_SPEC: CommandSpec = {
  name: "claude-code",
  summary: "install (or remove) the hooks that check and complete Claude Code's compactions",
  description:
    "install writes three hook entries into Claude Code's settings (~/.claude/settings.json, or\n" +
    "$CLAUDE_CONFIG_DIR/settings.json; with --project, ./.claude/settings.json), next to any hooks\n" +
    "already there. Before Claude Code compacts, the hook tells its summary what must survive (your\n" +
    "constraints, errors still standing, files modified); after, it gives those back to the model and\n" +
    "checks the summary (Claude Code shows the line). Each compaction's report shows in\n" +
    "`base-context show` and `tree` once the transcript is imported (the hooks import it).\n" +
    "uninstall removes those entries and nothing else; status says where they are installed.\n" +
    "hook is what the entries run: it reads Claude Code's hook JSON on stdin and never blocks it.",
  arguments: [{ name: "install|uninstall|status|hook", description: "what to do" }],
  options: [
    { name: "project", description: "the project's .claude/settings.json (in the current folder) instead of your own" },
    { name: "command", value: "cmd", description: "the command the entries run (default: this base-context, by its full path)" },
    JSON_OPTION,
  ],
  examples: ["base-context claude-code install", "base-context claude-code install --project", "base-context claude-code uninstall"],
  exitStatus: "Exit status: 0 done (hook: always, a failure is said on stderr), 1 failure, 2 usage error.",
};

const ACTIONS = ["install", "uninstall", "status", "hook"] as const;

export function claudeCodeCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(CLAUDE_CODE_SPEC, argv, io, async (args) => {
    const action = args.arguments[0];
    if (action === undefined) throw new UsageError(`missing what to do: ${ACTIONS.join(", ")}`);
    if (!(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`"${action}" is not one of ${ACTIONS.join(", ")}`);
    if (args.arguments.length > 1) throw new UsageError(`${action} takes no argument "${args.arguments[1]}"`);
    if (action === "hook") {
      const { runClaudeCodeHook } = await import("./claude-code-hook.js");
      return runClaudeCodeHook(io);
    }
    const project = flag(args, "project") ? resolve(".") : undefined;
    const path = claudeSettingsPath(io.env, project);
    const json = flag(args, "json");
    const style = styleFor(io.stdout, io.env);
    if (action === "status") {
      const hooks = installedHooks(readClaudeSettings(path));
      if (json) writeJson(io, { settings: path, installed: hooks.length > 0, hooks });
      else io.stdout.write(`${statusLine(path, hooks.map((hook) => hook.event))}\n`);
      return;
    }
    if (action === "uninstall") {
      if (stringOption(args, "command") !== undefined) throw new UsageError("--command goes with install");
      const settings = readClaudeSettings(path);
      const removed = installedHooks(settings);
      if (removed.length > 0) writeClaudeSettings(path, withoutOurHooks(settings));
      if (json) writeJson(io, { settings: path, removed });
      else io.stdout.write(removed.length > 0 ? `Removed Base Context's hooks from ${displayPath(path)}\n` : `No Base Context hooks in ${displayPath(path)}: nothing to remove\n`);
      return;
    }
    const command = stringOption(args, "command") ?? defaultCommand();
    if (!isOurCommand(command)) throw new UsageError(`--command must run "base-context claude-code hook" (it ends with it), not "${command}"`);
    const settings = readClaudeSettings(path);
    writeClaudeSettings(path, withOurHooks(settings, command));
    if (json) {
      writeJson(io, {
        settings: path,
        command,
        events: HOOK_EVENTS.map(({ event, matcher }) => ({ event, ...(matcher ? { matcher } : {}) })),
      });
      return;
    }
    io.stdout.write(`Installed Base Context's hooks in ${style.bold(displayPath(path))}\n`);
    io.stdout.write(`  PreCompact: tells Claude Code's summary what must survive\n`);
    io.stdout.write(`  SessionStart (after a compaction): gives the model back what must survive\n`);
    io.stdout.write(`  PostCompact: checks Claude Code's summary and shows what it kept\n`);
    io.stdout.write(`  command: ${command}\n`);
    io.stdout.write(`${style.dim(`Remove them with: base-context claude-code uninstall${project !== undefined ? " --project" : ""}`)}\n`);
  });
}

/** One line for `status` and `doctor`. */
export function statusLine(path: string, events: readonly string[]): string {
  if (events.length === 0) return `not installed in ${displayPath(path)} (base-context claude-code install)`;
  const missing = HOOK_EVENTS.filter(({ event }) => !events.includes(event)).map(({ event }) => event);
  const where = `installed in ${displayPath(path)} (${[...new Set(events)].join(", ")})`;
  return missing.length > 0 ? `${where}, without ${missing.join(", ")}: run base-context claude-code install again` : where;
}

/** This base-context, by the full path of Node and of its bin script, so Claude Code finds it whatever its PATH. */
function defaultCommand(): string {
  const bin = fileURLToPath(new URL("../../bin/base-context.js", import.meta.url));
  let script = bin;
  try {
    script = realpathSync(bin);
  } catch {
    // Not there (an unusual layout): the path as computed.
  }
  return `${shellWord(process.execPath)} ${shellWord(script)} claude-code hook`;
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `doctor`'s line: whether the hooks are installed for the user or for the project, and whether a settings file is unreadable. */
export function claudeCodeCheck(
  env: NodeJS.ProcessEnv,
  projectDir: string,
): { name: string; status: "ok" | "warn" | "skip"; summary: string; fixes: string[] } {
  const found: string[] = [];
  const problems: string[] = [];
  const partial: string[] = [];
  for (const path of [claudeSettingsPath(env, undefined), claudeSettingsPath(env, projectDir)]) {
    try {
      const events = installedHooks(readClaudeSettings(path)).map((hook) => hook.event);
      if (events.length > 0) found.push(statusLine(path, events));
      if (events.length > 0 && HOOK_EVENTS.some(({ event }) => !events.includes(event))) partial.push(path);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  const name = "claude code";
  if (problems.length > 0) return { name, status: "warn", summary: problems.join("; "), fixes: ["Fix the file: Claude Code reads it too."] };
  if (partial.length > 0) return { name, status: "warn", summary: found.join("; "), fixes: ["base-context claude-code install"] };
  if (found.length > 0) return { name, status: "ok", summary: `hooks ${found.join("; ")}`, fixes: [] };
  return { name, status: "skip", summary: `hooks not installed (base-context claude-code install puts them in ${displayPath(claudeSettingsPath(env, undefined))})`, fixes: [] };
}
