/**
 * `base-context navigate <session> <entry> [--summarize] …`: `tree/navigate` from the terminal,
 * in-process on the user's database. Ctrl-C while the summary is being written cancels it;
 * nothing is written then.
 */
import type { TreeNavigateProgress } from "@base-context/protocol";
import type { NavigateParams, NavigateResult } from "../tree/index.js";
import { flag, integerOption, JSON_OPTION, stringOption, UsageError, type CommandSpec, type ParsedArgs } from "./args.js";
import { withDaemon } from "./open-daemon.js";
import { renderSummary } from "./compact-report.js";
import { processIo, styleFor, writeJson, type CliIo, type Style } from "./output.js";
import { lostLine, retentionLine, retentionOf } from "./retention-line.js";
import { EXIT, interruptible, runCommand } from "./run.js";
import { resolveSessionId } from "./session-ref.js";

export const NAVIGATE_SPEC: CommandSpec = {
  name: "navigate",
  summary: "move a session to another entry, optionally summarizing the branch left",
  description:
    "Like /tree in an agent. Choosing a user message moves to just before it and prints its text,\n" +
    "to be edited and sent again. With --summarize the branch being left is summarized into a\n" +
    "branch_summary entry (by the configured model, else the built-in extractive summarizer).",
  arguments: [
    { name: "session", description: "session id (or a unique start of it, at least 4 characters)" },
    { name: "entry", description: "the entry to go to (see: base-context tree <session>)" },
  ],
  options: [
    { name: "summarize", short: "s", description: "summarize the branch being left" },
    { name: "instructions", short: "i", value: "text", description: "what the summary should focus on" },
    { name: "replace-instructions", description: "use --instructions as the whole summary prompt" },
    { name: "label", value: "text", description: "label the summary entry (the entry itself without --summarize)" },
    {
      name: "context-window",
      value: "n",
      description: "the agent model's window (default 128000): the summary reads up to n − branchSummary.reserveTokens tokens",
    },
    JSON_OPTION,
  ],
  examples: ["base-context navigate 5b0c 3f2a91c0", 'base-context navigate 5b0c 3f2a91c0 --summarize --label "redis attempt"'],
  exitStatus:
    "Exit status: 0 moved (or already there), 1 failure or not moved (cancelled by a plugin, the session changed meanwhile), 2 usage error.",
};

export function navigateCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(NAVIGATE_SPEC, argv, io, async (args) => {
    const [sessionRef, targetId] = args.arguments as [string, string];
    const params = navigateOptions(args);

    const result = await interruptible(io, "Opening the session database", (signal, spinner) =>
      withDaemon(io, async (daemon) => {
        const sessionId = await resolveSessionId(daemon, sessionRef);
        spinner.update("Navigating");
        return daemon.tree.navigate(
          { sessionId, targetId, ...params },
          {
            signal,
            progress: (value: TreeNavigateProgress) => {
              if (value.kind === "report") spinner.update(value.message);
            },
          },
        );
      }),
    );

    if (flag(args, "json")) writeJson(io, result);
    else io.stdout.write(describeResult(result, targetId, styleFor(io.stdout, io.env)));
    return result.status === "moved" || result.status === "unchanged" ? EXIT.ok : EXIT.failure;
  });
}

function navigateOptions(args: ParsedArgs): Omit<NavigateParams, "sessionId" | "targetId"> {
  const instructions = stringOption(args, "instructions");
  const label = stringOption(args, "label");
  const contextWindow = integerOption(args, "context-window", { min: 1, max: 100_000_000 });
  if (flag(args, "replace-instructions") && instructions === undefined) throw new UsageError("--replace-instructions needs --instructions");
  if (label === "") throw new UsageError("--label must not be empty");
  return {
    summarize: flag(args, "summarize"),
    ...(instructions !== undefined ? { customInstructions: instructions } : {}),
    ...(flag(args, "replace-instructions") ? { replaceInstructions: true } : {}),
    ...(label !== undefined ? { label } : {}),
    ...(contextWindow !== undefined ? { contextWindow } : {}),
  };
}

const PLAIN_STYLE: Style = { bold: (t) => t, dim: (t) => t, red: (t) => t, green: (t) => t, yellow: (t) => t, cyan: (t) => t };

/**
 * The result for people: where the leaf is, the branch summary written (as `compact` shows its
 * summary, with what it kept of the branch), and the text to send again.
 */
export function describeResult(result: NavigateResult, targetId: string, style: Style = PLAIN_STYLE): string {
  const lines: string[] = [];
  switch (result.status) {
    case "unchanged":
      lines.push(`Already at ${targetId}: nothing to do.`);
      break;
    case "cancelled":
    case "stale":
      lines.push(`Not moved: ${result.message ?? result.status}.`);
      break;
    case "moved": {
      // A user message is "written again": the leaf goes to just before it.
      const where = result.editorText === undefined ? targetId : `just before ${targetId}`;
      lines.push(`Moved to ${where}; the leaf is now ${result.leafId ?? "before the first entry"}.`);
      const summary = result.summaryEntry;
      if (summary?.type === "branch_summary") {
        const by = summary.fromHook ? `plugin ${result.pluginId ?? "(unknown)"}` : summarizerOf(summary.details);
        lines.push(`Branch summary ${summary.id} of the branch left at ${summary.fromId}, written by ${by}:`, "");
        lines.push(renderSummary(summary.summary, style), "");
        const retention = result.retention ?? retentionOf(summary.details);
        if (retention) {
          lines.push(`Retention: ${retentionLine(retention)}`);
          const lost = lostLine(retention);
          if (lost) lines.push(`Lost: ${style.yellow(lost)}`);
        }
      }
      if (result.editorText !== undefined)
        lines.push("", "Text to edit and send again:", ...result.editorText.split("\n").map((line) => `  ${line}`));
      break;
    }
  }
  return `${lines.join("\n")}\n`;
}

function summarizerOf(details: unknown): string {
  const summarizer = typeof details === "object" && details !== null ? (details as { summarizer?: unknown }).summarizer : undefined;
  return typeof summarizer === "string" ? summarizer : "the daemon";
}
