/**
 * `base-context claude-code hook`: what Claude Code runs around its compactions
 * (docs/claude-code.md). It reads the hook's JSON on stdin, imports the transcript (only what is
 * new), and answers on stdout with the hook's answer and nothing else:
 *
 * - PreCompact: plain text, which Claude Code appends to the summary instructions after the
 *   user's own `/compact` instructions: the user's constraints, the errors still standing (their
 *   exact first lines) and the files modified, in the context about to be summarized;
 * - SessionStart (source `compact`): `{"hookSpecificOutput": {"hookEventName": "SessionStart",
 *   "additionalContext": …}}`. Claude Code runs it before it writes the new summary anywhere a
 *   hook can read it, so it gives back those same items of the context just replaced; when the
 *   transcript already holds the new summary, only what that summary lost (nothing: no answer);
 * - PostCompact: its input carries the summary. The summary is checked against the context it
 *   replaced and the retention line printed (Claude Code shows it to the user; after `/compact`
 *   the model sees it too). The import stores the same report on the compaction once the
 *   transcript holds it.
 *
 * Every failure of its own (bad input, a transcript that cannot be read, a database that cannot
 * be opened, too slow) ends with exit status 0, nothing on stdout and the reason on stderr:
 * Claude Code goes on as if the hook were not there.
 */
import { statSync } from "node:fs";
import { dirname } from "node:path";
import type { CompactionEntry, SessionEntry } from "@base-context/protocol";
import type { SessionService } from "../sessions/service.js";
import { checkRetention, clip, criticalLines, formatRetention, lostItems, PROBE_KINDS, type LostItems } from "@base-context/core";
import { probesWithHandedBack } from "../sessions/handed-back.js";
import { log } from "../log.js";
import { baseContextHome, defaultDatabasePath } from "../paths.js";
import { pseudoFileSystem } from "../pseudo-filesystem.js";
import { HOOK_DEADLINE_MS, startHookDeadline } from "./hook-deadline.js";
import { withDaemon } from "./open-daemon.js";
import type { CliIo } from "./output.js";

/** Characters of instructions the PreCompact answer may add (Claude Code cuts a hook's text at 10,000). */
export const PRE_COMPACT_BUDGET_CHARS = 2_000;
/** Characters of what was lost the SessionStart answer may add to the context. */
export const AFTER_COMPACT_BUDGET_CHARS = 4_000;
/** The hook's JSON is small; anything larger is not Claude Code's. */
const MAX_INPUT_BYTES = 1 << 20;
const STDIN_WAIT_MS = 5_000;

interface HookInput {
  session_id?: unknown;
  transcript_path?: unknown;
  hook_event_name?: unknown;
  source?: unknown;
  custom_instructions?: unknown;
  compact_summary?: unknown;
}

/** Runs the hook; always exit status 0 (a failure is said on stderr), within one deadline (hook-deadline.ts). */
export async function runClaudeCodeHook(io: CliIo): Promise<number> {
  // Its stderr is for its own failures: an import's warnings (a line skipped) are for `base-context import`.
  if (io.env.BASE_CONTEXT_LOG === undefined) process.env.BASE_CONTEXT_LOG = "error";
  const deadline = startHookDeadline(`${FAILURE_PREFIX}it did not end within ${HOOK_DEADLINE_MS / 1000} s${FAILURE_SUFFIX}\n`);
  try {
    // A home on a file system the kernel makes up (/proc, /sys) can hang its creation: refused before anything tries.
    const home = baseContextHome(io.env);
    const problem = pseudoFileSystem(home) ?? pseudoFileSystem(dirname(defaultDatabasePath(io.env)));
    if (problem !== undefined) throw new Error(`cannot use the Base Context home ${home}: ${problem}`);
    const input = parseInput(await readInput(io, deadline.signal));
    await answer(io, input, deadline.signal);
  } catch (error) {
    io.stderr.write(`${FAILURE_PREFIX}${error instanceof Error ? error.message : String(error)}${FAILURE_SUFFIX}\n`);
  } finally {
    deadline.stop();
  }
  return 0;
}

const FAILURE_PREFIX = "base-context claude-code hook: ";
const FAILURE_SUFFIX = " (Claude Code goes on without it)";

/** The hook's answer to its event, on stdout; nothing when it has nothing to say. */
async function answer(io: CliIo, input: HookInput, signal: AbortSignal): Promise<void> {
  const event = input.hook_event_name;
  if (event === "PreCompact") {
    const text = await withSession(io, transcriptOf(input), signal, (sessions, sessionId) =>
      preCompactInstructions(sessions.contextEntries(sessionId)),
    );
    if (text.length > 0) io.stdout.write(`${text}\n`);
  } else if (event === "SessionStart") {
    // Installed with the matcher "compact"; a start of another kind is none of its business.
    if (input.source !== "compact") return;
    const context = await withSession(io, transcriptOf(input), signal, (sessions, sessionId) => {
      const current = sessions.contextEntries(sessionId);
      const compaction = newClaudeCodeCompaction(current);
      if (compaction === undefined) return standingItems(current);
      return lostByCompaction(compaction.summary, replacedBy(compaction, sessions.contextEntries(sessionId, compaction.parentId)));
    });
    if (context !== undefined) {
      io.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: context } })}\n`);
    }
  } else if (event === "PostCompact") {
    const summary = input.compact_summary;
    if (typeof summary !== "string" || summary.trim().length === 0) throw new Error("the PostCompact input carries no compact_summary");
    const line = await withSession(io, transcriptOf(input), signal, (sessions, sessionId) => {
      const current = sessions.contextEntries(sessionId);
      const compaction = newClaudeCodeCompaction(current);
      const replaced =
        compaction === undefined ? current : replacedBy(compaction, sessions.contextEntries(sessionId, compaction.parentId));
      return retentionReportLine(summary, replaced);
    });
    io.stdout.write(`${line}\n`);
  } else {
    throw new Error(`hook_event_name ${JSON.stringify(event)} is not one it answers (PreCompact, SessionStart, PostCompact)`);
  }
}

/** The instructions for the summary Claude Code is about to write (empty: nothing to ask). */
export function preCompactInstructions(path: readonly SessionEntry[]): string {
  const probes = probesWithHandedBack(path);
  const items: LostItems = {
    constraints: probes.constraints,
    errors: probes.errors.filter((item) => item.resolved !== true),
    files: probes.files.filter((item) => item.detail === "modified"),
  };
  const heading =
    "Base Context read this session's transcript. Keep each of these in the summary, the quoted text exactly " +
    "(the user's constraints, errors still unresolved, files modified):";
  const { lines, skipped } = criticalLines(items, PRE_COMPACT_BUDGET_CHARS - heading.length - 60);
  if (lines.length === 0) return "";
  return [heading, ...lines, ...(skipped > 0 ? [`(${skipped} more not listed)`] : [])].join("\n");
}

/**
 * What Claude Code's summary lost of the context it replaced (`replaced`: that context, up to the
 * compaction's marker), for the context after it; undefined when it lost nothing.
 */
export function lostByCompaction(summary: string, replaced: readonly SessionEntry[]): string | undefined {
  const heading =
    "Claude Code's summary of the earlier conversation left these out. Base Context read them from the " +
    "transcript before the compaction; they still hold:";
  return handOver(heading, lostItems(summary, probesWithHandedBack(replaced)));
}

/**
 * The items of the context a compaction is replacing, for the context after it, when the new
 * summary cannot be read yet (Claude Code writes it after its SessionStart hooks have run).
 */
export function standingItems(context: readonly SessionEntry[]): string | undefined {
  const heading =
    "Before this compaction, the conversation held these; Base Context read them from the transcript " +
    "(the user's constraints, errors still unresolved, files modified). They still hold:";
  const items = lostItems("", probesWithHandedBack(context));
  return handOver(heading, { ...items, files: items.files.filter((item) => item.detail === "modified") });
}

/** `Claude Code's summary kept 1/1 files, 0/1 errors, 1/1 constraints; lost: error "…"`, for PostCompact. */
export function retentionReportLine(summary: string, replaced: readonly SessionEntry[]): string {
  const report = checkRetention(summary, probesWithHandedBack(replaced));
  const lost = PROBE_KINDS.flatMap((kind) =>
    report.missing[kind].map((text) => `${kind === "files" ? "file" : kind.replace(/s$/, "")} "${clip(text, 120)}"`),
  );
  const shown = lost.slice(0, 5).join("; ");
  return `Base Context: Claude Code's summary ${formatRetention(report)}${lost.length > 0 ? `; lost: ${shown}${lost.length > 5 ? ` (+${lost.length - 5} more)` : ""}` : ""}`;
}

/** The context a compaction replaced: `context` (up to its parent, the marker) before its first kept entry. */
function replacedBy(compaction: CompactionEntry, context: readonly SessionEntry[]): readonly SessionEntry[] {
  const keptFrom = context.findIndex((entry) => entry.id === compaction.firstKeptEntryId);
  return keptFrom >= 0 ? context.slice(0, keptFrom) : context;
}

function handOver(heading: string, items: LostItems): string | undefined {
  const { lines, skipped } = criticalLines(items, AFTER_COMPACT_BUDGET_CHARS - heading.length - 60);
  if (lines.length === 0) return undefined;
  return [heading, ...lines, ...(skipped > 0 ? [`(${skipped} more not listed)`] : [])].join("\n");
}

/**
 * The compaction the context now starts with (`context`: the entries it is built from), when it
 * is Claude Code's and nothing has answered since: the one a SessionStart after compacting is about.
 */
export function newClaudeCodeCompaction(context: readonly SessionEntry[]): CompactionEntry | undefined {
  for (let i = context.length - 1; i >= 0; i--) {
    const entry = context[i]!;
    if (entry.type === "message" && entry.message.role === "assistant") return undefined;
    if (entry.type !== "compaction") continue;
    const source = (entry.details as { source?: unknown } | undefined)?.source;
    return source === "claude-code" && entry.firstKeptEntryId !== entry.id ? entry : undefined;
  }
  return undefined;
}

/** Imports the transcript (what is new in it) and hands `work` the sessions and the session's id. */
async function withSession<T>(
  io: CliIo,
  transcript: string,
  signal: AbortSignal,
  work: (sessions: SessionService, sessionId: string) => T,
): Promise<T> {
  const started = performance.now();
  return withDaemon(io, async (daemon) => {
    const opened = performance.now();
    signal.throwIfAborted();
    // Out of time, the import keeps what it read and says where it stopped: the next run goes on from there.
    const imported = await daemon.sessions.import({ path: transcript, format: "claude-code-jsonl" }, { signal, keepWhatIsRead: true });
    signal.throwIfAborted();
    const importedAt = performance.now();
    const answer = work(daemon.sessions, imported.session.id);
    const ms = (from: number, to: number) => `${Math.round(to - from)} ms`;
    log(
      "debug",
      `claude-code hook: database ${ms(started, opened)}, import ${ms(opened, importedAt)} (${imported.addedEntries ?? 0} new entries), ` +
        `answer ${ms(importedAt, performance.now())}`,
    );
    return answer;
  });
}

function transcriptOf(input: HookInput): string {
  const path = input.transcript_path;
  if (typeof path !== "string" || path.length === 0) throw new Error("the hook's input names no transcript_path");
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (error) {
    throw new Error(`cannot read the transcript ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!isFile) throw new Error(`the transcript ${path} is not a file`);
  return path;
}

function parseInput(text: string): HookInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`its input is not the hook's JSON (${text.trim().length === 0 ? "nothing" : `${JSON.stringify(text.slice(0, 40))}…`} on stdin)`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("its input is not a JSON object");
  return value as HookInput;
}

/** stdin, whole: at most MAX_INPUT_BYTES, and only from a pipe or a file that ends (before STDIN_WAIT_MS, and the deadline). */
async function readInput(io: CliIo, deadline: AbortSignal): Promise<string> {
  const stdin = io.stdin ?? process.stdin;
  if (stdin.isTTY === true) throw new Error("it reads the hook's JSON on stdin: Claude Code runs it (see base-context claude-code --help)");
  const chunks: Buffer[] = [];
  let size = 0;
  const reading = (async () => {
    for await (const chunk of stdin) {
      const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
      size += buffer.length;
      if (size > MAX_INPUT_BYTES) throw new Error(`its input is larger than ${MAX_INPUT_BYTES} bytes`);
      chunks.push(buffer);
    }
    return Buffer.concat(chunks).toString("utf8");
  })();
  let timer: NodeJS.Timeout | undefined;
  let stopped: (() => void) | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no end of its input on stdin within ${STDIN_WAIT_MS / 1000} s`)), STDIN_WAIT_MS);
    stopped = () => reject(deadline.reason);
    deadline.addEventListener("abort", stopped, { once: true });
  });
  try {
    return await Promise.race([reading, timeout]);
  } catch (error) {
    // A stdin that never ends must not keep the process alive.
    stdin.destroy();
    reading.catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
    if (stopped) deadline.removeEventListener("abort", stopped);
  }
}
