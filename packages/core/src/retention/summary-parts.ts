/**
 * A previous summary read back into its parts (docs/summaries.md "Updating a summary"), whoever
 * wrote it: the structured format (ours, pi's, a model's), Claude Code's numbered summary (its
 * analysis left out: "1. Primary Request and Intent:", "3. Files and Code Sections:", "6. All user
 * messages:", "7. Pending Tasks:"…), or free text. What the agent's harness wrote around it (Claude
 * Code's "This session is being continued…" and "Please continue the conversation…"), code blocks,
 * code lines, file trees and stack frames are never parts: an update must not carry them.
 */
import { junkKind } from "./junk.js";

export interface SummaryParts {
  goal: string[];
  constraints: string[];
  done: string[];
  inProgress: string[];
  blocked: string[];
  decisions: string[];
  nextSteps: string[];
  critical: string[];
  /** The human's messages the summary quotes (Claude Code's "All user messages"), in order. */
  userMessages: string[];
  /** Errors the summary says were fixed (an "Errors and fixes" list): history, never standing. */
  fixedErrors: string[];
  /** Files the summary lists (`<read-files>`/`<modified-files>`, or a files section). */
  files: { path: string; modified: boolean }[];
  /** Items of sections that are none of the above, and text outside any section. */
  other: string[];
  /** Not in the structured format (another agent's summary). */
  foreign: boolean;
}

type Part = Exclude<keyof SummaryParts, "files" | "foreign">;

export function emptySummaryParts(): SummaryParts {
  return {
    goal: [],
    constraints: [],
    done: [],
    inProgress: [],
    blocked: [],
    decisions: [],
    nextSteps: [],
    critical: [],
    userMessages: [],
    fixedErrors: [],
    files: [],
    other: [],
    foreign: false,
  };
}

/**
 * Lines an agent's harness writes around a summary or into a user turn: instructions to the
 * model, not the work. Claude Code's continuation preamble and closing instruction, our own
 * wrappers, reminders and command echoes.
 */
const HARNESS_LINE =
  /^(?:This session is being continued from a previous conversation|The conversation history before this point was compacted|The user explored a different conversation branch|Summary of that exploration|The following is a summary of a branch|If you need specific details from before compaction|\*\*Turn Context \(split turn\):\*\*|Caveat: The messages below were generated)|continue the conversation from where we left (?:it )?off|without asking the user any further questions|Continue with the last task that you were asked to work on|<\/?(?:system-reminder|command-name|command-message|command-args|local-command-stdout|local-command-stderr|summary|analysis)>/i;

export function isHarnessLine(line: string): boolean {
  return HARNESS_LINE.test(line);
}

const FILE_LIST = /<(read-files|modified-files)>\n?([\s\S]*?)<\/\1>/g;
/** A section's way of saying it is empty: "(none)", "None stated", "N/A", any other line that is one parenthesis. */
const PLACEHOLDER = /^\(?(?:none|n\/a|nothing|none yet|none recorded|not stated)\b.*\)?\.?$|^\([^()]*\)\.?$/i;
/** A change word in a files section's item: the file was modified, not only read. */
const CHANGED =
  /\b(?:modif\w*|chang\w*|creat\w*|add\w*|new|edit\w*|updat\w*|wr[io]te|written|rewr\w*|fix\w*|remov\w*|renam\w*|delet\w*|implement\w*|refactor\w*|replac\w*|register\w*)\b/i;

/** Reads a summary into its parts. */
export function parseSummaryParts(text: string): SummaryParts {
  const parts = emptySummaryParts();
  const body = summaryProper(text, parts);
  let section: Part | "files" = "other";
  let inFence = false;
  for (const raw of body.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("```")) {
      inFence = !inFence;
      continue;
    }
    if (inFence || line.length === 0 || line === "---" || isHarnessLine(line)) continue;
    const heading = headingOf(raw);
    if (heading) {
      section = sectionFor(heading.title, heading.level, section);
      if (heading.rest.length > 0) addItem(parts, section, heading.rest);
      continue;
    }
    const item = line.replace(/^(?:[-*+•]\s+|\d+[.)]\s+)?(?:\[[ xX]\]\s+)?/, "").trim();
    if (item.length === 0 || PLACEHOLDER.test(item)) continue;
    if (section === "files") {
      // A files section: the path of each item, modified when its words (or those under it) say a change.
      const path = pathOf(item);
      if (path) parts.files.push({ path, modified: CHANGED.test(item) });
      else if (CHANGED.test(item) && parts.files.length > 0) parts.files[parts.files.length - 1]!.modified = true;
      continue;
    }
    addItem(parts, section, item);
  }
  return parts;
}

/** The summary without its analysis, its `<summary>` wrapper and its file lists (read into `files`). */
function summaryProper(text: string, parts: SummaryParts): string {
  let body = text.replace(/<analysis>[\s\S]*?<\/analysis>/g, "");
  const wrapped = /<summary>([\s\S]*?)(?:<\/summary>|$)/.exec(body);
  if (wrapped) body = wrapped[1]!;
  // Claude Code's stored form: "Analysis:" then the summary after a "Summary:" line.
  const analysis = /^Analysis:\s*$/m.exec(body);
  const summary = /^Summary:\s*$/m.exec(body);
  if (analysis && summary && summary.index > analysis.index) {
    body = body.slice(0, analysis.index) + body.slice(summary.index + summary[0].length);
  }
  body = body.replace(FILE_LIST, (_, kind: string, list: string) => {
    for (const path of list.split("\n").map((l) => l.trim())) if (path) parts.files.push({ path, modified: kind === "modified-files" });
    return "";
  });
  parts.foreign = !/^#{2,3}\s+(?:Goal|Original Request|Progress|Done)\b/m.test(body);
  return body;
}

/** `## Title`, `**Title**`, or a numbered heading at the margin (`3. Files and Code Sections:`, `3. **Files**:`). */
function headingOf(raw: string): { title: string; level: number; rest: string } | undefined {
  const line = raw.trim();
  const hashes = /^(#{1,6})\s+(.*)$/.exec(line);
  if (hashes) return { title: hashes[2]!, level: hashes[1]!.length, rest: "" };
  // A bold line of words is a heading; a bold path (a files section's item) is not.
  const bold = /^\*\*([A-Za-z][A-Za-z0-9 &/'(),.-]*?):?\*\*:?$/.exec(line);
  if (bold && !/[/\\]|\.\w{1,8}$/.test(bold[1]!)) return { title: bold[1]!, level: 2, rest: "" };
  if (/^\s/.test(raw)) return undefined;
  const numbered = /^\d+\.\s+(?:\*\*)?([A-Z][A-Za-z &/'-]{2,50}?)(?:\*\*)?:(?:\*\*)?\s*(.*)$/.exec(line);
  // A known section, or a title alone on its line ("2. Key Technical Concepts:").
  if (numbered && (numbered[2]!.trim().length === 0 || sectionFor(numbered[1]!, 2, "other") !== "other"))
    return { title: numbered[1]!, level: 2, rest: numbered[2]!.trim() };
  return undefined;
}

function sectionFor(title: string, level: number, current: Part | "files"): Part | "files" {
  const name = title.toLowerCase().replace(/[^a-z&' ]/g, " ").replace(/\s+/g, " ").trim();
  if (level >= 3) {
    if (/^(?:done|completed)/.test(name)) return "done";
    if (/^(?:in progress|current)/.test(name)) return "inProgress";
    if (/^(?:blocked|blockers)/.test(name)) return "blocked";
    if (current === "done" || current === "inProgress" || current === "blocked") return current;
  }
  if (/\b(?:goal|original request|primary request|intent|objective)s?\b/.test(name)) return "goal";
  if (/^(?:constraints|preferences|requirements)/.test(name)) return "constraints";
  if (/^(?:progress|early progress|done|completed|work completed)/.test(name)) return "done";
  if (/\berrors? (?:and|&) fix|\bfixes\b|^errors? (?:fixed|encountered)/.test(name)) return "fixedErrors";
  if (/\b(?:user'?s? messages|messages from the user)\b/.test(name)) return "userMessages";
  if (/^files\b|\bfiles (?:and|&) code\b|^(?:modified|changed|touched) files/.test(name)) return "files";
  if (/^(?:current work|current state|in progress)/.test(name)) return "inProgress";
  if (/^(?:pending|open|remaining) (?:tasks|work|items)/.test(name)) return "inProgress";
  if (/^(?:blocked|blockers|open issues|unresolved)/.test(name)) return "blocked";
  if (/^(?:key )?decisions/.test(name)) return "decisions";
  if (/^(?:optional )?next steps?\b|^next\b/.test(name)) return "nextSteps";
  if (/^(?:critical context|context for suffix)/.test(name)) return "critical";
  return "other";
}

function addItem(parts: SummaryParts, section: Part | "files", item: string): void {
  if (section === "files") return;
  // A quoted message is the human's words; a description of one ("(interrupted the test run)") is not.
  // Another agent's emphasis is markup around the words; ours is the format's (`**Decision**: why`).
  const text = section === "userMessages" ? (quoted(item) ?? "") : parts.foreign ? item.replace(/\*\*/g, "") : item;
  if (text.length === 0 || PLACEHOLDER.test(text) || isHarnessLine(text) || junkKind(text) !== undefined) return;
  parts[section].push(text);
}

/** The quoted words an item opens with (`"check again" (asking to re-check)` → `check again`). */
function quoted(text: string): string | undefined {
  const m = /^(?:User:\s*)?["“](.+?)["”](?=\s*(?:$|[(—–-]))/s.exec(text.trim());
  return m?.[1]?.trim();
}

/** The path an item of a files section opens with: a code span or bold name that looks like a path, or a bare path. */
function pathOf(item: string): string | undefined {
  const m = /^(?:\*\*)?(?:`([^`\s]+)`|([~.\w/\\-]+\.[A-Za-z]\w{0,7}|[~.\w-]*[/\\][~.\w/\\*-]+))(?:\*\*)?(?=$|[\s:—–(-])/.exec(item);
  const candidate = m?.[1] ?? m?.[2];
  if (candidate === undefined || candidate.includes("://")) return undefined;
  // `name/2` is a function and its arity, not a path.
  if (/[/\\]\d+$/.test(candidate)) return undefined;
  return /[/\\]|\.[A-Za-z]\w{0,7}$/.test(candidate) ? candidate : undefined;
}
