/**
 * The Goal of a structured summary, in the human's words: the current task — the latest request
 * that states one (six words or more) and what the user said after it ("yes, do it all", "you do
 * it", the latest four) — and the session's first request as background when different. Never
 * empty when a request precedes the cut: when the part only answers the agent (short replies, no
 * imperative of their own), an earlier summary's current task still is the task, the replies
 * following it (or, for a range holding only what an agent injects before its first turn, the
 * split turn's request). The earlier requests are under Done ("Request: …", "Earlier task: …"),
 * in the user's words.
 */
import { clip, opensWithWork } from "@base-context/core";
import type { Carried } from "./carry.js";
import type { Facts } from "./facts.js";
import type { Scorer } from "./items.js";
import { KEEP, type Item } from "./render.js";
import { TASK_WORDS, withReplies } from "./task-words.js";

const CURRENT = "Current task: ";
const BACKGROUND = "Background, the first request: ";
/** The human's words are kept whole up to here: they are what a successor must not paraphrase. */
const GOAL_CHARS = 2000;
const REQUEST_CHARS = 600;

export interface GoalParts {
  items: Item[];
  /** What the user asked before the current task, for Done. */
  asked: Item[];
}

/** `turnRequest`: the request of the split turn that follows, the goal when nothing before the cut states one. */
export function goalParts(facts: Facts, carried: Carried, turnRequest: string | undefined, s: Scorer): GoalParts {
  const task = taskThread(facts.userTurns);
  const items: Item[] = [];
  const asked: Item[] = carried.earlierTasks.map((t) => s.item(`Earlier task: ${t}`, 46));
  let background = carried.background;
  const first = facts.requests[0];
  const asksNew = facts.userTurns.some((t) => t.request && opensWithWork(t.text));
  const keepsCarried = task.length === 0 && carried.currentTask !== undefined && !asksNew;
  // The part's own task: its latest request of six words or more, else (no earlier task going on) its latest short ones.
  let thread: Facts["userTurns"][number][] = task.length > 0 ? task : keepsCarried ? [] : recentThread(facts.userTurns);
  if (thread.length > 0) {
    const [head, ...then] = thread;
    items.push({ text: `${CURRENT}${withThen(facts, head!.text, then)}`, priority: KEEP });
    // The earlier summary's current task is history now.
    if (carried.currentTask !== undefined && carried.currentTask !== background) {
      if (background === undefined) background = carried.currentTask;
      else asked.push(s.item(`Earlier task: ${carried.currentTask}`, 46));
    }
  } else if (carried.currentTask !== undefined) {
    // Short replies ("yes", "you do it", an option's name) answer the agent about the task still going on.
    thread = facts.userTurns.slice(-MAX_REPLIES);
    items.push({ text: `${CURRENT}${withThen(facts, carried.currentTask, thread)}`, priority: KEEP });
  } else if (turnRequest !== undefined) {
    // Nothing asked before the cut (Codex's injected context, then one long turn): that turn's request is the goal.
    items.push({ text: `${CURRENT}${clip(turnRequest, GOAL_CHARS)}`, priority: KEEP });
  } else if (facts.userTurns.length > 0) {
    // Nothing reads as a request ("how do I configure the launcher?"): what the user said is still what they are after.
    const latest = facts.userTurns[facts.userTurns.length - 1]!;
    items.push({ text: `${CURRENT}${withThen(facts, latest.text, [])}`, priority: KEEP });
    thread.push(latest);
  }
  const inGoal = new Set(thread.map((t) => t.index));
  if (background === undefined && first && !inGoal.has(first.index)) background = first.text;
  // No request at all: the first thing the user said is the background.
  const opening = facts.userTurns[0];
  if (background === undefined && !first && opening && !inGoal.has(opening.index)) background = opening.text;
  if (background !== undefined) items.push({ text: `${BACKGROUND}${clip(background, GOAL_CHARS)}`, priority: KEEP });
  asked.push(...carried.requests.map((t) => s.item(`Request: ${clip(t, REQUEST_CHARS)}`, 46)));
  for (const request of facts.requests) {
    if (inGoal.has(request.index) || request.text === background) continue;
    asked.push(s.noted({ text: `Request: ${clip(request.text, REQUEST_CHARS)}`, index: request.index }, 48));
  }
  return { items, asked };
}

/**
 * Where the current task was asked: the index of the latest request of six words or more (else
 * of the latest short imperative), or -1 when the part states none (an earlier summary's task goes on).
 */
export function currentTaskIndex(facts: Facts): number {
  const short = facts.userTurns.filter((t) => t.request && opensWithWork(t.text)).pop();
  return taskThread(facts.userTurns)[0]?.index ?? short?.index ?? -1;
}

/** The task with what the user said after it (the latest few), and the reply that opens the split turn after the cut. */
function withThen(facts: Facts, task: string, then: readonly Facts["userTurns"][number][]): string {
  const said = then.slice(-MAX_REPLIES).map((t) => `"${clip(t.text, 300)}"`);
  const answered = facts.questionAnswered;
  if (answered) said.push(`"${clip(answered.reply, 80)}" (to: "${clip(answered.question, 200)}")`);
  return withReplies(clip(task, GOAL_CHARS), said);
}

/** How many of the user's replies the Goal quotes after the task: the latest ones. */
const MAX_REPLIES = 4;

/** The latest request of six words or more and what the user said after it; empty when the part has none. */
function taskThread(turns: Facts["userTurns"]): Facts["userTurns"][number][] {
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i]!;
    if (turn.request && turn.text.split(/\s+/).length >= TASK_WORDS) return turns.slice(i);
  }
  return [];
}

/** Short requests only: the earliest request among the latest four messages, and what followed it. */
function recentThread(turns: Facts["userTurns"]): Facts["userTurns"][number][] {
  const thread = turns.slice(-4);
  // Only replies and remarks since the last request: start the thread at a request.
  while (thread.length > 0 && !thread[0]!.request) thread.shift();
  return thread;
}
