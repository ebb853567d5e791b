/**
 * Retention probes (docs/retention.md): what a successor must not lose from the messages a
 * summary replaces. Pure and linear in the input; the extractive summarizer is built on the same
 * readings, and every summary is checked against them.
 */
import type { ContextMessage, UserContentBlock } from "@base-context/protocol";
import { errorLine, exitedAsDesigned, foundNothing, hasStackTrace } from "./errors.js";
import { clip, normalizeKey, sentences } from "./text.js";
import { classifyToolCall, reportedExitCode } from "./tools.js";

export const PROBE_KINDS = ["files", "errors", "requests", "constraints", "plan"] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];
/** The kinds repair restores verbatim (requests and plans are the summarizer's to word). */
export const REPAIRED_KINDS = ["files", "errors", "constraints"] as const satisfies readonly ProbeKind[];

export interface ProbeItem {
  readonly text: string;
  /** Index of the message it came from (-1: carried over from an earlier summary). */
  readonly index: number;
  /** Files: `read` or `modified`; errors: what failed (a command, a tool). */
  readonly detail?: string;
}

export type RetentionProbes = Record<ProbeKind, ProbeItem[]>;

export function emptyProbes(): RetentionProbes {
  return { files: [], errors: [], requests: [], constraints: [], plan: [] };
}

const TRIVIAL =
  /^(?:y|yes|yep|yeah|ok|okay|k|sure|go|go on|go ahead|continue|proceed|do it|please do|please continue|keep going|thanks|thank you|thx|lgtm|sounds good|great|nice|perfect|correct|right|no|nope|done|retry|again|try again)[.!]*$/i;
// "Great. Now also…": acknowledgements before the actual request.
const LEADING_FILLER = /^(?:(?:great|thanks|thank you|ok|okay|nice|perfect|cool|good|awesome|sure|alright|yes|yep)\b[.!,]*\s+)+/i;
const CONSTRAINT =
  /\b(?:never|always|don't|dont|do not|must|mustn't|must not|only|prefer|avoid|make sure|should|shouldn't|should not|can't|cannot|no need to|not allowed|instead of|stick to|without)\b|^(?:please\s+)?keep\b|^(?:please\s+)?use\b[^.]*,\s*not\b/i;
const PLAN =
  /^(?:next,?\s+|then,?\s+|now,?\s+|after that,?\s+|first,?\s+)?(?:i'll|i will|we'll|we will|i'm going to|we're going to|i need to|we need to|i still need|we still need|still need|still to do|todo|to do:|remaining|next step|the plan is|plan:)\b/i;

/** A user message that states a goal: not a slash command, not one word, not an acknowledgement. */
export function isGoalRequest(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.startsWith("/")) return false;
  if (!/\s/.test(trimmed)) return false;
  return !TRIVIAL.test(trimmed) && !isSummaryText(trimmed);
}

/** The request without the acknowledgement before it ("Great. Now add…" → "Now add…"). */
export function requestText(text: string): string {
  const trimmed = text.trim();
  const stripped = trimmed.replace(LEADING_FILLER, "");
  return stripped.length > 0 ? stripped.charAt(0).toUpperCase() + stripped.slice(1) : trimmed;
}

/** The sentences of a user message that constrain the work ("never…", "always…", "only…"). */
export function constraintSentences(text: string): string[] {
  return sentences(text).filter((s) => !s.endsWith("?") && CONSTRAINT.test(s) && s.split(/\s+/).length >= 3);
}

export function isPlanSentence(sentence: string): boolean {
  return PLAN.test(sentence) && !sentence.endsWith(":");
}

/** Summaries that reached a range as messages (wrapped for the LLM, or the summary roles). */
export function isSummaryText(text: string): boolean {
  return text.includes("<summary>") && /^## (?:Goal|Original Request)\b/m.test(text);
}

export function contentText(content: string | readonly UserContentBlock[]): string {
  if (typeof content === "string") return content;
  let text = "";
  for (const block of content) if (block.type === "text") text += (text ? "\n" : "") + block.text;
  return text;
}

/**
 * A tool result that reports a failure: flagged `isError`, a non-zero exit, or a stack trace —
 * unless the command exited non-zero as designed (an empty search, `test`, `diff`, `sleep`) or a
 * search tool only found nothing.
 */
export function toolResultFailed(
  call: { readonly kind: string; readonly target: string } | undefined,
  message: Extract<ContextMessage, { role: "toolResult" }>,
): boolean {
  const text = contentText(message.content);
  const trace = hasStackTrace(text);
  if (trace) return true;
  const exitCode = call?.kind === "run" ? reportedExitCode(text) : undefined;
  if (message.isError !== true && (exitCode === undefined || exitCode === 0)) return false;
  if (call?.kind === "run") return !exitedAsDesigned(call.target, exitCode ?? 1, text);
  return !(call?.kind === "search" || call === undefined) || !foundNothing(text);
}

/** A `!command` the user ran that failed (not cancelled, not as designed). */
export function bashFailed(message: Extract<ContextMessage, { role: "bashExecution" }>): boolean {
  if (message.excludeFromContext === true || message.cancelled) return false;
  const code = typeof message.exitCode === "number" ? message.exitCode : 0;
  return (code !== 0 && !exitedAsDesigned(message.command, code, message.output)) || hasStackTrace(message.output);
}

type MessageOf<R extends ContextMessage["role"]> = Extract<ContextMessage, { role: R }>;

/**
 * A one-pass reader of messages, one method per role (the retention probes and the extractive
 * summarizer's facts read them alike). A role without a method is skipped; the text of user and
 * custom messages comes as plain text.
 */
export interface MessageReader {
  user?(text: string, index: number): void;
  assistant?(message: MessageOf<"assistant">, index: number): void;
  toolResult?(message: MessageOf<"toolResult">, index: number): void;
  bash?(message: MessageOf<"bashExecution">, index: number): void;
  custom?(customType: string, text: string, index: number): void;
  /** A compaction or branch summary message. */
  summary?(summary: string, index: number): void;
}

/** Hands each message to the reader's method for its role, in order. */
export function readMessages(messages: readonly ContextMessage[], reader: MessageReader): void {
  messages.forEach((message, index) => {
    switch (message.role) {
      case "user":
        return reader.user?.(contentText(message.content), index);
      case "assistant":
        return reader.assistant?.(message, index);
      case "toolResult":
        return reader.toolResult?.(message, index);
      case "bashExecution":
        return reader.bash?.(message, index);
      case "custom":
        return reader.custom?.(message.customType, contentText(message.content), index);
      case "compactionSummary":
      case "branchSummary":
        return reader.summary?.(message.summary, index);
    }
  });
}

/** Collects probes in one pass; `add*` keep the first occurrence of each item. */
class ProbeCollector implements MessageReader {
  readonly probes = emptyProbes();
  private readonly seen = new Map<ProbeKind, Map<string, number>>(PROBE_KINDS.map((k) => [k, new Map()]));
  private readonly calls = new Map<string, { kind: string; target: string }>();
  private lastUserIndex = -1;
  private lastPlan: ProbeItem | undefined;

  add(kind: ProbeKind, item: ProbeItem): void {
    const key = kind === "files" ? item.text : normalizeKey(item.text);
    if (key.length === 0) return;
    const seen = this.seen.get(kind)!;
    const at = seen.get(key);
    if (at === undefined) {
      seen.set(key, this.probes[kind].length);
      this.probes[kind].push(item);
    } else if (kind === "files" && item.detail === "modified") {
      // A file read and later changed is a modified file.
      this.probes.files[at] = { ...this.probes.files[at]!, detail: "modified" };
    }
  }

  user(text: string, index: number): void {
    if (isSummaryText(text) || text.trim().length === 0) return;
    this.lastUserIndex = index;
    if (!isGoalRequest(text)) return;
    // Code fences are not the request: the words around them are.
    const words = sentences(requestText(text)).join(" ");
    if (words.length > 0) this.add("requests", { text: clip(words, 300), index });
    for (const sentence of constraintSentences(text)) this.add("constraints", { text: clip(sentence, 300), index });
  }

  assistant(message: Extract<ContextMessage, { role: "assistant" }>, index: number): void {
    let text = "";
    for (const block of message.content) {
      if (block.type === "text") text += (text ? "\n" : "") + block.text;
      else if (block.type === "toolCall") {
        const action = classifyToolCall(block.name, block.arguments);
        this.calls.set(block.id, { kind: action.kind, target: action.target });
        if ((action.kind === "read" || action.kind === "modify") && action.target.length > 0) {
          this.add("files", { text: action.target, index, detail: action.kind === "modify" ? "modified" : "read" });
        }
      }
    }
    if (message.stopReason === "error" && message.errorMessage) {
      this.add("errors", { text: errorLine(message.errorMessage), index, detail: "model call" });
    }
    if (text.trim().length === 0) return;
    // The latest text decides: a plan stated earlier was overtaken by the work after it.
    const said = sentences(text);
    const final = said[said.length - 1];
    const plan = final?.endsWith("?") ? final : said.filter(isPlanSentence).pop();
    this.lastPlan = plan === undefined ? undefined : { text: clip(plan, 240), index };
  }

  toolResult(message: Extract<ContextMessage, { role: "toolResult" }>, index: number): void {
    const call = this.calls.get(message.toolCallId);
    if (!toolResultFailed(call, message)) return;
    this.add("errors", { text: errorLine(contentText(message.content)), index, detail: call?.target ? call.target : message.toolName });
  }

  bash(message: Extract<ContextMessage, { role: "bashExecution" }>, index: number): void {
    if (bashFailed(message)) this.add("errors", { text: errorLine(message.output), index, detail: message.command });
  }

  finish(): RetentionProbes {
    // A question or plan the user already answered is not open any more… unless nothing else is.
    if (this.lastPlan && (this.lastPlan.index > this.lastUserIndex || !this.lastPlan.text.endsWith("?")))
      this.probes.plan.push(this.lastPlan);
    return this.probes;
  }
}

/** The probes of a range of messages (what a summary of them is checked against). */
export function probeMessages(messages: readonly ContextMessage[]): RetentionProbes {
  const collector = new ProbeCollector();
  readMessages(messages, collector);
  return collector.finish();
}

/** Probes of several sources in order (earlier summaries' carried items first), duplicates dropped. */
export function mergeProbes(...all: readonly RetentionProbes[]): RetentionProbes {
  const merged = emptyProbes();
  for (const kind of PROBE_KINDS) {
    const seen = new Set<string>();
    for (const probes of all) {
      for (const item of probes[kind]) {
        const key = kind === "files" ? item.text : normalizeKey(item.text);
        if (seen.has(key)) continue;
        seen.add(key);
        merged[kind].push(item);
      }
    }
  }
  // Only the newest plan is the last stated plan.
  merged.plan = merged.plan.slice(-1);
  return merged;
}
