/**
 * `base-context navigate <session> <entry> [--summarize] …`: `tree/navigate` from the terminal.
 * Ctrl-C while the summary is being written cancels it; nothing is written then.
 */
import { CancelledError } from "../errors.js";
import type { NavigateResult } from "../tree/index.js";
import { EXIT, parseCommandArgs, processIo, withDaemon, type CliIo } from "./tree-cli-support.js";

export const NAVIGATE_USAGE = `Usage: base-context navigate <session> <entry> [options]

Moves the session's leaf to <entry>, optionally summarizing the branch being left. Selecting a
user message moves before it and prints its text, to be edited and sent again.

Options:
  --summarize               summarize the branch being left (a branch_summary entry)
  --instructions <text>     extra focus for the summary
  --replace-instructions    use --instructions as the whole summary prompt
  --label <text>            label the summary entry (or the target, without --summarize)
  --context-window <n>      the agent model's window (default 128000): the summary reads up to
                            n − branchSummary.reserveTokens tokens of the branch
  --json                    print the result as JSON
  -h, --help
`;

export async function navigateCommand(args: string[], io: CliIo = processIo()): Promise<number> {
  const parsed = parseCommandArgs(
    "navigate",
    NAVIGATE_USAGE,
    {
      args,
      allowPositionals: true,
      options: {
        summarize: { type: "boolean" },
        instructions: { type: "string" },
        "replace-instructions": { type: "boolean" },
        label: { type: "string" },
        "context-window": { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    },
    io,
  );
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  if (values.help) {
    io.stdout.write(NAVIGATE_USAGE);
    return EXIT.ok;
  }
  const [sessionId, targetId, ...extra] = parsed.positionals;
  const contextWindow = values["context-window"] === undefined ? undefined : Number(values["context-window"]);
  const problem =
    sessionId === undefined || targetId === undefined
      ? "give the session id and the entry to navigate to"
      : extra.length > 0
        ? `unexpected argument "${extra[0]}"`
        : values["replace-instructions"] && values.instructions === undefined
          ? "--replace-instructions needs --instructions"
          : values.label === ""
            ? "--label must not be empty"
            : contextWindow !== undefined && !(Number.isInteger(contextWindow) && contextWindow > 0)
              ? "--context-window must be a positive integer"
              : undefined;
  if (problem !== undefined) {
    io.stderr.write(`base-context navigate: ${problem}\n\n${NAVIGATE_USAGE}`);
    return EXIT.usage;
  }

  return withDaemon("navigate", io, async (daemon) => {
    const controller = new AbortController();
    const interrupt = () => controller.abort(new CancelledError());
    process.once("SIGINT", interrupt);
    try {
      const result = await daemon.tree.navigate(
        {
          sessionId: sessionId!,
          targetId: targetId!,
          summarize: values.summarize === true,
          ...(values.instructions !== undefined ? { customInstructions: values.instructions } : {}),
          ...(values["replace-instructions"] ? { replaceInstructions: true } : {}),
          ...(values.label !== undefined ? { label: values.label } : {}),
          ...(contextWindow !== undefined ? { contextWindow } : {}),
        },
        {
          signal: controller.signal,
          progress: (value) => {
            if (value.kind === "report" && io.stderr.isTTY) io.stderr.write(`${value.message}…\n`);
          },
        },
      );
      io.stdout.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : describeResult(result, targetId!));
      return result.status === "moved" || result.status === "unchanged" ? EXIT.ok : EXIT.failed;
    } finally {
      process.removeListener("SIGINT", interrupt);
    }
  });
}

/** The result for people: what moved, what was written, and the text to type again. */
export function describeResult(result: NavigateResult, targetId: string): string {
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
      lines.push(`Moved to ${targetId}; the leaf is now ${result.leafId ?? "before the first entry"}.`);
      const summary = result.summaryEntry;
      if (summary?.type === "branch_summary") {
        const by = summary.fromHook ? `plugin ${result.pluginId ?? "(unknown)"}` : summarizerOf(summary.details);
        lines.push(`Branch summary ${summary.id} of the branch left at ${summary.fromId}, written by ${by}.`);
      }
      if (result.editorText !== undefined) lines.push("", "Text to edit and send again:", ...result.editorText.split("\n").map((line) => `  ${line}`));
      break;
    }
  }
  return `${lines.join("\n")}\n`;
}

function summarizerOf(details: unknown): string {
  const summarizer = typeof details === "object" && details !== null ? (details as { summarizer?: unknown }).summarizer : undefined;
  return typeof summarizer === "string" ? summarizer : "the daemon";
}
