/**
 * A previous summary brought up to date (docs/summaries.md "Updating a summary"): each item it
 * carries is checked against the part being summarized, instead of being copied.
 *
 * - its request is the current task while the part asks for nothing new; its earlier requests,
 *   and the human's words it quotes (Claude Code's "All user messages"), stay the human's words;
 * - a request restored into another agent's summary (`User request: …` under its Critical
 *   Context, core's `restoreSummary`) is the latest the human made before its cut: the current
 *   task, its Goal the background; the earlier ones it restored (`Earlier user request: …`) are
 *   its earlier requests; the lines themselves are not carried (the Goal and Done hold them);
 * - its rules stay rules, and the rules in the human's words it quotes join them, as do the
 *   constraints repair or restoration wrote under its Critical Context (`User constraint: …`);
 * - an in-progress item the part finished (a completing command or sentence names its subject:
 *   `gh issue close 42`, "Committed PROJ-12") moves to Done;
 * - an item naming a file the part moved or removed goes (the file lists say where it is now);
 * - its blockers are tracked as failures from before the part (facts.ts), so the part's
 *   successes resolve them by the same rules as its own errors;
 * - its "errors and fixes" are history, never standing errors.
 */
import { clip, commandKeys, constraintSentences, extractPaths, normalizeKey, readConstraint, readRequest } from "@base-context/core";
import type { Facts } from "./facts.js";
import { statesTask, withReplies } from "./task-words.js";
import type { ParsedSummary } from "./previous.js";

export interface Carried {
  currentTask?: string;
  background?: string;
  /** Goal lines of an earlier summary that are neither (its tasks before the current one). */
  earlierTasks: string[];
  /** The human's requests the previous summary kept, in their words. */
  requests: string[];
  constraints: string[];
  done: string[];
  /** In-progress items the part finished. */
  completed: string[];
  inProgress: string[];
  decisions: string[];
  nextSteps: string[];
  critical: string[];
  /** Errors the previous summary says were fixed (another agent's "errors and fixes"). */
  fixed: string[];
}

const CURRENT = "Current task: ";
const BACKGROUND = "Background, the first request: ";
const EARLIER = "Earlier task: ";
const REQUEST = /^Request: /;
const RESTORED = /^User request: /;
const EARLIER_RESTORED = /^Earlier user request: /;
const CONSTRAINT_LINE = /^User constraint: /;
/** A line reporting what the user said ("The user's original request was: …"): the Goal holds it; it is not a step. */
const REPORTS_USER = /^(?:the user(?:'s)?\b[^.]{0,40}\b(?:said|asked|request(?:ed)?|wrote|wants?|was)\b|user'?s? (?:last|original|most recent) request)/i;
/** Lines recomputed from the part each time, or moved to their section (the Goal, Constraints): never carried as they are. */
const RECOMPUTED = /^(?:User request: |Earlier user request: |User constraint: |Earlier blocker \(may be resolved\): |The assistant's last message asked: |The last turn was aborted by the user\.|Requested focus: )/;

export function carryPrevious(previous: ParsedSummary, facts: Facts): Carried {
  const fresh = (item: string) => !namesChangedFile(item, facts);
  const goal = previousGoal(previous);
  const completed: string[] = [];
  const inProgress: string[] = [];
  for (const item of previous.inProgress.filter(fresh)) (finishedIn(item, facts) ? completed : inProgress).push(item);
  return {
    ...goal,
    requests: [
      ...previous.done.filter((d) => REQUEST.test(d)).map((d) => d.replace(REQUEST, "")),
      ...previous.userMessages.filter((m) => readRequest(m) === "yes" && m !== goal.currentTask && m !== goal.background),
      ...previous.critical.filter((c) => EARLIER_RESTORED.test(c)).map((c) => c.replace(EARLIER_RESTORED, "")),
    ],
    constraints: [
      ...previous.constraints.filter((c) => !previous.foreign || readConstraint(c) === "yes"),
      ...previous.userMessages.flatMap((m) => constraintSentences(m)),
      ...previous.critical.filter((c) => CONSTRAINT_LINE.test(c)).map((c) => c.replace(CONSTRAINT_LINE, "")),
    ],
    done: previous.done.filter((d) => !REQUEST.test(d) && fresh(d)),
    completed,
    inProgress,
    decisions: previous.decisions.filter(fresh),
    nextSteps: previous.nextSteps.filter((step) => fresh(step) && !REPORTS_USER.test(step) && !finishedIn(step, facts)),
    critical: previous.critical.filter((c) => fresh(c) && !RECOMPUTED.test(c)),
    fixed: previous.fixedErrors.filter(fresh).map((e) => clip(e, 240)),
  };
}

/**
 * The current task and background a previous summary states: ours by their labels; another
 * agent's from the human's words it quotes (the latest request is the current task, the first the
 * background), else its goal's first line.
 */
function previousGoal(previous: ParsedSummary): Pick<Carried, "currentTask" | "background" | "earlierTasks"> {
  const earlierTasks: string[] = [];
  let currentTask: string | undefined;
  let background: string | undefined;
  let labelled = false;
  for (const line of previous.goal) {
    if (line.startsWith(CURRENT) && !labelled) {
      currentTask = line.slice(CURRENT.length);
      labelled = true;
    } else if (line.startsWith(BACKGROUND)) background ??= line.slice(BACKGROUND.length);
    else if (line.startsWith(EARLIER)) earlierTasks.push(line.slice(EARLIER.length));
    else if (previous.foreign || line === currentTask) continue;
    else if (labelled) {
      // A plain line after our labelled goal is the split turn's request: the latest one, unless it
      // only answers the agent about the task going on ("keep going till the end").
      if (statesTask(line)) {
        earlierTasks.push(currentTask!);
        currentTask = line;
      } else currentTask = withReplies(currentTask!, [`"${line}"`]);
      labelled = false;
    } else if (currentTask === undefined) currentTask = line;
    else earlierTasks.push(line);
  }
  const asked = previous.userMessages.filter((m) => readRequest(m) === "yes");
  currentTask ??= asked[asked.length - 1] ?? previous.goal[0];
  // Ours states its task with a label and never holds the line (an update moves it into the Goal).
  const restored = previous.goal.some((line) => line.startsWith(CURRENT)) ? undefined : restoredRequest(previous);
  if (restored !== undefined && restored !== currentTask) {
    if (currentTask !== undefined) {
      if (background === undefined) background = currentTask;
      else earlierTasks.push(currentTask);
    }
    currentTask = restored;
  }
  if (background === undefined && asked.length > 1 && asked[0] !== currentTask) background = asked[0];
  return { ...(currentTask !== undefined ? { currentTask } : {}), ...(background !== undefined ? { background } : {}), earlierTasks };
}

/** The request restoration added to another agent's summary (its latest, when several). */
function restoredRequest(previous: ParsedSummary): string | undefined {
  const lines = previous.critical.filter((line) => RESTORED.test(line));
  return lines.length > 0 ? lines[lines.length - 1]!.replace(RESTORED, "") : undefined;
}

/** The subject an item is about: its first name with a digit and a separator (`PROJ-12`, `v0.8.0`, `task-3.2`). */
function subjectOf(item: string): string | undefined {
  for (const token of item.split(/[\s`*()[\],:;"'!?]+/)) {
    const bare = token.replace(/[.]+$/, "");
    if (bare.length >= 4 && /[A-Za-z]/.test(bare) && /\d/.test(bare) && /[-._/#]/.test(bare)) return bare;
  }
  return undefined;
}

/**
 * Whether an item is finished, as of the part: it states a finished action itself ("Added the
 * close button"); a completing command or sentence of the part names its subject; every command
 * it names in backticks ran without error; or (an item without a subject) a completing sentence
 * holds most of its words, or the commands that ran hold all of them ("Commit and push").
 */
function finishedIn(item: string, facts: Facts): boolean {
  if (STATES_DONE.test(item) && !NOT_YET.test(item)) return true;
  const subject = subjectOf(item);
  if (subject !== undefined) {
    const bounded = new RegExp(`(?:^|[^\\w.-])${escapeRegex(subject)}(?![\\w-]|\\.\\w)`, "i");
    return facts.completions.some((c) => bounded.test(c.text));
  }
  const commands = [...item.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((span) => /^[a-z][\w.-]*\s+\S/.test(span));
  if (commands.length > 0) return commands.every((command) => commandKeys(command).some((key) => facts.succeededKeys.has(key)));
  const wanted = distinctive(item);
  if (wanted.length >= 2 && wanted.every((w) => ranWords(facts).has(w))) return true;
  if (wanted.length < 3) return false;
  return facts.completions.some((c) => {
    const said = new Set(distinctive(c.text));
    return wanted.filter((w) => said.has(w)).length >= Math.ceil(wanted.length * 0.6);
  });
}

/** An item that is itself a finished action: "Added …", "Created …", "Fixed …" (not "Add …"). */
const STATES_DONE = /^(?:added|created|implemented|fixed|wrote|updated|removed|renamed|moved|committed|pushed|merged|closed|completed|finished|resolved|registered|configured|installed)\b/i;
const NOT_YET = /\b(?:not|n't|yet|still|needs?|remaining|pending|todo|to do)\b/i;

/** The words of the commands that succeeded, by their first five letters. */
function ranWords(facts: Facts): Set<string> {
  const words = new Set<string>();
  for (const key of facts.succeededKeys) for (const word of distinctive(key.replace(/^\w+:/, ""))) words.add(word);
  return words;
}

function distinctive(text: string): string[] {
  return [...new Set(normalizeKey(text).split(/[^a-z0-9_./-]+/).filter((w) => w.length >= 4).map((w) => w.slice(0, 5)))];
}

/** An item that names a file the part moved or removed: it describes a file that is no longer there. */
function namesChangedFile(item: string, facts: Facts): boolean {
  if (facts.fileChanges.length === 0) return false;
  const named = extractPaths(item).map(slashes);
  return facts.fileChanges.some((change) => {
    const gone = slashes(change.path);
    return named.some((path) => path === gone || path.endsWith(`/${gone}`) || gone.endsWith(`/${path}`));
  });
}

function slashes(path: string): string {
  return path.replace(/\\/g, "/").replace(/^\.\//, "");
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
