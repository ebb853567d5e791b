/**
 * `base-context compact <pi-session.jsonl | session> [--instructions text] [--keep-recent n]
 * [--reserve n] [--strategy auto|prune|summarize] [--json]`: compaction now, in-process, on the user's database. A file is imported
 * first; the summary is written by the configured summarizer (the offline extractive one when no
 * model is configured), committed like `compaction/run` does, and shown with what it changed.
 */
import { CompactionStrategy, type CompactionResult, type CompactionSettings } from "@base-context/protocol";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Daemon } from "../daemon.js";
import { choiceOption, flag, integerOption, JSON_OPTION, stringOption, UsageError, type CommandSpec } from "./args.js";
import { dryRunCompaction, printDryRun } from "./compact-dry-run.js";
import { importSessionFile, type ImportedFile } from "./compact-import.js";
import { printCompactReport, type CompactReport } from "./compact-report.js";
import { withDaemon } from "./open-daemon.js";
import { displayPath, processIo, writeJson, type CliIo } from "./output.js";
import { EXIT, interruptible, runCommand } from "./run.js";
import { resolveSessionId } from "./session-ref.js";
import type { Spinner } from "./spinner.js";
import { countMethod } from "./token-words.js";

export const COMPACT_SPEC: CommandSpec = {
  name: "compact",
  summary: "compact a session now: summarize the older part, keep the recent part verbatim",
  description:
    "Works like /compact in an agent. A session file (pi's, Claude Code's, Codex's) is imported first;\n" +
    "a file imported before is brought up to date and its session compacted (import --new-id makes a\n" +
    "copy). --dry-run writes nothing: it prints the summary a compaction would write. The summary\n" +
    "comes from the configured summarizer: a model when the global settings name one\n" +
    "(summarizer.model; its key in OPENAI_API_KEY, or summarizer.apiKeyEnv),\n" +
    "else the built-in offline extractive one. A key alone sends nothing anywhere.",
  arguments: [{ name: "session", description: "a session file (.jsonl), or a session id (or a unique start of it)" }],
  options: [
    { name: "instructions", short: "i", value: "text", description: "what the summary should focus on, with high priority" },
    { name: "keep-recent", value: "n", description: "tokens kept verbatim at the end (default: compaction.keepRecentTokens, 20000)" },
    { name: "reserve", value: "n", description: "compaction.reserveTokens; the summary may use 80 % of it (default 16384)" },
    {
      name: "strategy",
      value: "rung",
      description:
        "prune: only hide old large tool outputs (no model call); summarize or auto (default): summarize, hiding the kept part's large outputs",
    },
    {
      name: "dry-run",
      description: "summarize as a compaction would (plugins, summarizer, retention check) and print the summary; write nothing",
    },
    JSON_OPTION,
  ],
  examples: [
    "base-context compact examples/sessions/refactor-auth.jsonl",
    "base-context compact 5b0c --dry-run",
    'base-context compact 5b0c --instructions "keep the exact migration commands"',
    "base-context compact session.jsonl --keep-recent 4000 --json",
    "base-context compact 5b0c --strategy prune",
  ],
  exitStatus: "Exit status: 0 compacted or nothing to compact, 1 failure (nothing written), 2 usage error.",
};

const MAX_TOKENS_OPTION = 10_000_000;

export function compactCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(COMPACT_SPEC, argv, io, async (args) => {
    const overrides: Partial<CompactionSettings> = {};
    const keepRecent = integerOption(args, "keep-recent", { min: 0, max: MAX_TOKENS_OPTION });
    const reserve = integerOption(args, "reserve", { min: 1, max: MAX_TOKENS_OPTION });
    if (keepRecent !== undefined) overrides.keepRecentTokens = keepRecent;
    if (reserve !== undefined) overrides.reserveTokens = reserve;
    const instructions = stringOption(args, "instructions");
    const strategy = choiceOption(args, "strategy", CompactionStrategy.options);

    if (flag(args, "dry-run")) {
      if (strategy === "prune") throw new UsageError("--dry-run tries a summary; --strategy prune writes no summary");
      const run = await interruptible(io, "Opening the session database", (signal, spinner) =>
        withDaemon(io, async (daemon) => {
          const sessionId = await targetSession(daemon, args.arguments[0]!, spinner);
          return dryRunCompaction(daemon, { sessionId: sessionId.id, overrides, instructions, signal, spinner });
        }),
      );
      return printDryRun(io, run, flag(args, "json"));
    }

    // Ctrl-C stops the model call; nothing is written.
    const report = await interruptible(io, "Opening the session database", (signal, spinner) =>
      withDaemon(io, (daemon) =>
        compact(daemon, { target: args.arguments[0]!, overrides, instructions, strategy, signal, spinner, env: io.env }),
      ),
    );

    // Hints name the command as it runs here: `base-context` when that is on the PATH, else `node <main.js>`.
    if (io.cli !== undefined) report.cli = io.cli;
    if (flag(args, "json")) writeJson(io, report);
    else printCompactReport(io, report);
    return report.status === "committed" || report.status === "nothing_to_compact" ? EXIT.ok : EXIT.failure;
  });
}

interface CompactOptions {
  target: string;
  overrides: Partial<CompactionSettings>;
  instructions: string | undefined;
  strategy: CompactionStrategy | undefined;
  signal: AbortSignal;
  spinner: Spinner;
  env: NodeJS.ProcessEnv;
}

async function compact(daemon: Daemon, options: CompactOptions): Promise<CompactReport> {
  const { spinner } = options;
  const { id: sessionId, imported } = await targetSession(daemon, options.target, spinner);

  const before = await daemon.context.build({ sessionId, format: "native" });
  spinner.update("Preparing the compaction");
  const started = performance.now();
  const result: CompactionResult = await daemon.compaction.run(
    {
      sessionId,
      reason: "manual",
      workDoneToken: "cli",
      ...(options.strategy !== undefined ? { strategy: options.strategy } : {}),
      ...(options.instructions !== undefined ? { customInstructions: options.instructions } : {}),
      ...(Object.keys(options.overrides).length > 0 ? { settings: options.overrides } : {}),
    },
    {
      signal: options.signal,
      progress: (_token, value) => {
        if (value.kind !== "end" && value.message) spinner.update(`${value.message[0]!.toUpperCase()}${value.message.slice(1)}`);
      },
    },
  );
  const durationMs = Math.round(performance.now() - started);
  const after = result.status === "committed" ? await daemon.context.build({ sessionId, format: "native" }) : before;
  const { session } = await daemon.sessions.get({ sessionId });
  const settings = daemon.sessionSettings.forSession(sessionId);

  return {
    sessionId,
    ...(session.name !== undefined ? { sessionName: session.name } : {}),
    ...(imported ? { imported } : {}),
    status: result.status,
    ...(result.message !== undefined ? { message: result.message } : {}),
    ...(result.summarizer !== undefined ? { summarizer: result.summarizer } : {}),
    ...(result.entry ? { entry: result.entry } : {}),
    ...(result.stats ? { stats: result.stats } : {}),
    ...(result.rung !== undefined ? { rung: result.rung } : {}),
    ...(result.pruned ? { pruned: result.pruned } : {}),
    ...(result.retention ? { retention: result.retention } : {}),
    contextTokens: { before: before.tokens, after: after.tokens },
    countMethod: countMethod(settings.tokens),
    keepRecentTokens: options.overrides.keepRecentTokens ?? settings.compaction.keepRecentTokens,
    ...(result.pluginFailures !== undefined ? { pluginFailures: result.pluginFailures } : {}),
    contextMessages: { before: before.messages.length, after: after.messages.length },
    durationMs,
    ...(result.jobId !== undefined ? { jobId: result.jobId } : {}),
    summarizerConfig: {
      provider: settings.summarizer.provider,
      apiKeyEnv: settings.summarizer.apiKeyEnv,
      keySet: Boolean(options.env[settings.summarizer.apiKeyEnv]),
      modelNamed: settings.summarizer.provider === "openai" || daemon.userNamedModel(),
      settingsPath: displayPath(daemon.settings.globalPath),
    },
  };
}

/**
 * The session a target names: a session file (imported first, or brought up to date), or a session
 * id. When the current folder has plugins of its own and the session was started elsewhere, they
 * are opened too: a project's plugins run only for sessions started in its folder, and the plugin
 * host's log then says that they do not run for this one, and why (plugins/applies.ts).
 */
async function targetSession(daemon: Daemon, target: string, spinner: Spinner): Promise<{ id: string; imported?: ImportedFile }> {
  let found: { id: string; imported?: ImportedFile };
  if (!isSessionFile(target)) found = { id: await resolveSessionId(daemon, target) };
  else {
    spinner.update("Importing the session file");
    const imported = await importSessionFile(daemon, resolve(target));
    found = { id: imported.sessionId, imported };
  }
  const here = process.cwd();
  if (existsSync(join(here, ".base-context", "plugins"))) {
    const { session } = await daemon.sessions.get({ sessionId: found.id });
    if (resolve(session.cwd) !== resolve(here)) await daemon.plugins.list(here);
  }
  return found;
}

/**
 * A path (something by that name exists, or it is named like a file); anything else is a session id.
 * A folder counts as a path, so that it is reported as a folder rather than as an unknown session.
 */
function isSessionFile(target: string): boolean {
  if (target.endsWith(".jsonl") || target.includes("/") || target.includes("\\")) return true;
  try {
    statSync(target);
    return true;
  } catch {
    return false;
  }
}
