/**
 * How the user's words in a Goal read (goal.ts, and carry.ts for an earlier summary's Goal): a
 * request that states a task of its own, or a reply about the task going on, quoted after it.
 */
import { opensWithWork } from "@base-context/core";

/** A request of this many words states a task; a shorter one is a step of it or a reply to the agent. */
export const TASK_WORDS = 6;

/**
 * Whether a request states a task of its own: six words or more, or an imperative naming work
 * ("Try Tailwind instead."); a short reply ("yes", "you do it", "the second one", "continue")
 * answers the agent about the task going on.
 */
export function statesTask(text: string): boolean {
  return text.split(/\s+/).length >= TASK_WORDS || opensWithWork(text);
}

/** `task Then: "yes, do it all".`; a task that already lists replies lists the new ones after them. */
export function withReplies(task: string, said: readonly string[]): string {
  if (said.length === 0) return task;
  const listed = /^([\s\S]*) Then: ([\s\S]*)\.$/.exec(task);
  return listed ? `${listed[1]} Then: ${listed[2]}; ${said.join("; ")}.` : `${task} Then: ${said.join("; ")}.`;
}
