/**
 * `base-context compact <session> --dry-run`: what a compaction would write, without writing it.
 * The session's compaction is prepared as `compact` prepares it (same cut, settings and overrides),
 * then summarized through the same chain, the plugins' hook first, then the summarizer and its
 * fallbacks, and checked and repaired as a committed summary is (`summarize/compaction`'s pipeline:
 * compaction/stateless-compaction.ts). The summary and its retention report are printed; nothing
 * is stored, so a plugin author can try a summarizer as often as they like on the same session.
 */
import type { CompactionSettings, SummarizeResult } from "@base-context/protocol";
import { formatRetention } from "@base-context/core";
import { summarizeCompactionStateless } from "../compaction/stateless-compaction.js";
import type { Daemon } from "../daemon.js";
import { styleFor, writeJson, type CliIo } from "./output.js";
import { EXIT } from "./run.js";
import type { Spinner } from "./spinner.js";

export interface DryRunOptions {
  sessionId: string;
  overrides: Partial<CompactionSettings>;
  instructions: string | undefined;
  signal: AbortSignal;
  spinner: Spinner;
}

export type DryRun =
  | { sessionId: string; nothing: string }
  | { sessionId: string; result: SummarizeResult; tokensBefore: number | null; summarized: number };

export async function dryRunCompaction(daemon: Daemon, options: DryRunOptions): Promise<DryRun> {
  const { sessionId, spinner } = options;
  spinner.update("Preparing the compaction (nothing will be written)");
  const prepared = await daemon.compaction.prepare(sessionId, options.overrides);
  if ("nothing" in prepared) return { sessionId, nothing: prepared.nothing };
  const { preparation } = prepared;
  const { session } = await daemon.sessions.get({ sessionId });
  const { entries } = await daemon.sessions.path({ sessionId });
  spinner.update("Summarizing (nothing will be written)");
  const result = await summarizeCompactionStateless(
    {
      settingsFor: (projectDir) => daemon.settings.get(projectDir).settings,
      sourcesFor: (projectDir) => daemon.settings.get(projectDir).sources,
      summarizerFor: (settings, clientModel) => daemon.summarizerFor(settings, clientModel),
      hooks: daemon.plugins.compactHooks(),
    },
    {
      sessionId,
      projectDir: session.cwd,
      messagesToSummarize: preparation.messagesToSummarize,
      turnPrefixMessages: preparation.turnPrefixMessages,
      ...(preparation.previousSummary !== undefined ? { previousSummary: preparation.previousSummary } : {}),
      fileOps: preparation.fileOps,
      firstKeptEntryId: preparation.firstKeptEntryId,
      tokensBefore: preparation.tokensBefore,
      branchEntries: entries,
      ...(options.instructions !== undefined ? { customInstructions: options.instructions } : {}),
      ...(Object.keys(options.overrides).length > 0 ? { settings: options.overrides } : {}),
    },
    {
      projectDir: session.cwd,
      signal: options.signal,
      progress: (value) => {
        if (value.kind === "report" && value.message) spinner.update(`${value.message} (nothing will be written)`);
      },
    },
  );
  return { sessionId, result, tokensBefore: preparation.tokensBefore, summarized: preparation.messagesToSummarize.length };
}

/** The summary and its report, or why there is none; the exit status. */
export function printDryRun(io: CliIo, run: DryRun, json: boolean): number {
  if (json) {
    writeJson(io, { dryRun: true, ...run });
    return EXIT.ok;
  }
  const style = styleFor(io.stdout, io.env);
  io.stdout.write(`${style.bold(`Dry run of a compaction of session ${run.sessionId}`)}: nothing was written.\n`);
  if ("nothing" in run) {
    io.stdout.write(`Nothing to compact: ${run.nothing}\n`);
    return EXIT.ok;
  }
  const { result } = run;
  if (result.status !== "summarized") {
    io.stdout.write(`${style.yellow(result.status)}: ${result.message}\n`);
    return EXIT.ok;
  }
  io.stdout.write(`Summarized  ${run.summarized} messages (${result.message})\n`);
  io.stdout.write(`Summarizer  ${result.summarizer}\n`);
  if (result.retention !== undefined) io.stdout.write(`Retention   ${formatRetention(result.retention)}\n`);
  io.stdout.write(`\n${style.dim("── summary ──")}\n${result.summary ?? ""}\n`);
  return EXIT.ok;
}
