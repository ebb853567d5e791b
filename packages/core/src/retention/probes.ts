/**
 * Retention probes (docs/retention.md): what a successor must not lose from the messages a
 * summary replaces. Pure and linear in the input; the extractive summarizer is built on the same
 * readings, and every summary is checked against them.
 */
import type { ContextMessage, UserContentBlock } from "@base-context/protocol";
import { errorLine, exitedAsDesigned, foundNothing, hasStackTrace, startsWithErrorLine } from "./errors.js";
import { ANY_LATER_SUCCESS, commandFailureKeys, commandKeys, maySayFixed, saysFixed, wasCancelled } from "./resolution.js";
import { clip, normalizeKey, sentences } from "./text.js";
import { classifyToolCall, reportedExitCode } from "./tools.js";
import { constraintSentences, isSummaryText, ownSentences, readRequest, unsureConstraintSentences } from "./user-text.js";

export { constraintSentences, isGoalRequest, isSummaryText, readRequest, requestText } from "./user-text.js";

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
  /** Errors: fixed later in the range (a later success of the same action, or the assistant says so). */
  readonly resolved?: boolean;
}

export type RetentionProbes = Record<ProbeKind, ProbeItem[]> & {
  /** What the probes saw but could not judge with confidence, so did not count (absent: nothing). */
  unjudged?: Unjudged;
};

/** User messages that may or may not ask for work, sentences that may or may not be rules. */
export interface Unjudged {
  requests: number;
  constraints: number;
}

export function emptyProbes(): RetentionProbes {
  return { files: [], errors: [], requests: [], constraints: [], plan: [] };
}

const PLAN =
  /^(?:next,?\s+|then,?\s+|now,?\s+|after that,?\s+|first,?\s+)?(?:i'll|i will|we'll|we will|i'm going to|we're going to|i need to|we need to|i still need|we still need|still need|still to do|todo|to do:|remaining|next step|the plan is|plan:)\b/i;

export function isPlanSentence(sentence: string): boolean {
  return PLAN.test(sentence) && !sentence.endsWith(":");
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
  if (wasCancelled(text)) return false;
  const trace = hasStackTrace(text);
  if (trace) return true;
  const exitCode = call?.kind === "run" ? reportedExitCode(text) : undefined;
  // A result whose own first line is an error line (`TypeError: …`), flagged or not; a file read is content.
  if (message.isError !== true && call?.kind !== "read" && startsWithErrorLine(text)) return true;
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

/**
 * The keys of a file action. Its first key is the one its failure is known by: a failed change
 * is fixed by a later change of the file; a failed read by any later read or change of a file of
 * that name (the agent found the file it meant). Its success counts for every key.
 */
function fileKeys(kind: string, target: string): string[] {
  const name = `lookup:${target.replace(/^.*[\\/]/, "")}`;
  if (kind === "read") return [name, ANY_LATER_SUCCESS];
  if (kind === "modify") return [`file:${target}`, name];
  return [`${kind}:${target}`];
}

/** An error seen, with the keys of the action that failed (a later success of one of them fixes it). */
interface TrackedError {
  readonly at: number;
  readonly keys: readonly string[];
  readonly fromCommand: boolean;
}

/** Collects probes in one pass; `add*` keep the first occurrence of each item. */
class ProbeCollector implements MessageReader {
  readonly probes = emptyProbes();
  private readonly seen = new Map<ProbeKind, Map<string, number>>(PROBE_KINDS.map((k) => [k, new Map()]));
  private readonly calls = new Map<string, { kind: string; target: string; keys: string[] }>();
  private readonly tracked: TrackedError[] = [];
  /** The tracked errors by each of their keys: a success looks up only those it may fix (long sessions fail often). */
  private readonly trackedByKey = new Map<string, TrackedError[]>();
  private readonly unjudged: Unjudged = { requests: 0, constraints: 0 };
  private lastUserIndex = -1;
  private lastPlan: ProbeItem | undefined;

  add(kind: ProbeKind, item: ProbeItem): number {
    const key = kind === "files" ? item.text : normalizeKey(item.text);
    if (key.length === 0) return -1;
    const seen = this.seen.get(kind)!;
    const at = seen.get(key);
    if (at === undefined) {
      seen.set(key, this.probes[kind].length);
      this.probes[kind].push(item);
      return this.probes[kind].length - 1;
    }
    if (kind === "files" && item.detail === "modified") {
      // A file read and later changed is a modified file.
      this.probes.files[at] = { ...this.probes.files[at]!, detail: "modified" };
    }
    // The same error again: it stands again until fixed again.
    if (kind === "errors" && this.probes.errors[at]!.resolved) this.probes.errors[at] = { ...this.probes.errors[at]!, resolved: false };
    return at;
  }

  user(text: string, index: number): void {
    if (isSummaryText(text) || text.trim().length === 0) return;
    this.lastUserIndex = index;
    const reading = readRequest(text);
    if (reading === "unsure") this.unjudged.requests++;
    if (reading === "yes") {
      // Code fences and pasted output are not the request: the user's own words around them are.
      const words = ownSentences(text).join(" ");
      if (words.length > 0) this.add("requests", { text: clip(words, 300), index });
    }
    for (const sentence of constraintSentences(text)) this.add("constraints", { text: clip(sentence, 300), index });
    this.unjudged.constraints += unsureConstraintSentences(text).length;
  }

  assistant(message: Extract<ContextMessage, { role: "assistant" }>, index: number): void {
    let text = "";
    for (const block of message.content) {
      if (block.type === "text") text += (text ? "\n" : "") + block.text;
      else if (block.type === "toolCall") {
        const action = classifyToolCall(block.name, block.arguments);
        const keys = action.kind === "run" ? commandKeys(action.target) : fileKeys(action.kind, action.target);
        this.calls.set(block.id, { kind: action.kind, target: action.target, keys });
        if ((action.kind === "read" || action.kind === "modify") && action.target.length > 0) {
          this.add("files", { text: action.target, index, detail: action.kind === "modify" ? "modified" : "read" });
        }
      }
    }
    const calledTools = message.content.some((block) => block.type === "toolCall");
    if (message.stopReason === "error" && message.errorMessage) {
      this.failed({ text: errorLine(message.errorMessage), index, detail: "model call" }, ["model"], false);
    } else if (message.stopReason === "stop" || (message.stopReason === undefined && !calledTools && text.trim().length > 0)) {
      // A finished answer: the model works again, and the agent moved past what it could not read.
      this.succeeded(["model"]);
    }
    if (text.trim().length === 0) return;
    for (const sentence of sentences(text)) this.resolveBySaying(sentence);
    // The latest text decides: a plan stated earlier was overtaken by the work after it.
    const said = sentences(text);
    const final = said[said.length - 1];
    const plan = final?.endsWith("?") ? final : said.filter(isPlanSentence).pop();
    this.lastPlan = plan === undefined ? undefined : { text: clip(plan, 240), index };
  }

  toolResult(message: Extract<ContextMessage, { role: "toolResult" }>, index: number): void {
    const call = this.calls.get(message.toolCallId);
    const keys = call?.keys ?? [`tool:${message.toolName}`];
    if (!toolResultFailed(call, message)) {
      this.succeeded(keys);
      return;
    }
    const item = { text: errorLine(contentText(message.content)), index, detail: call?.target ? call.target : message.toolName };
    const failureKeys = call?.kind === "run" ? commandFailureKeys(call.target) : call?.kind === "read" ? keys : keys.slice(0, 1);
    this.failed(item, failureKeys, call?.kind === "run");
  }

  bash(message: Extract<ContextMessage, { role: "bashExecution" }>, index: number): void {
    if (message.excludeFromContext === true || message.cancelled) return;
    const keys = commandKeys(message.command);
    if (bashFailed(message))
      this.failed({ text: errorLine(message.output), index, detail: message.command }, commandFailureKeys(message.command), true);
    else this.succeeded(keys);
  }

  private failed(item: ProbeItem, keys: readonly string[], fromCommand: boolean): void {
    const at = this.add("errors", item);
    if (at < 0) return;
    const tracked = { at, keys, fromCommand };
    this.tracked.push(tracked);
    for (const key of new Set(keys)) {
      const list = this.trackedByKey.get(key);
      if (list) list.push(tracked);
      else this.trackedByKey.set(key, [tracked]);
    }
  }

  /** Resolves every tracked error that shares a key with the success (or counts any later success). */
  private succeeded(keys: readonly string[]): void {
    for (const key of new Set([...keys, ANY_LATER_SUCCESS])) {
      for (const error of this.trackedByKey.get(key) ?? []) this.resolve(error.at);
    }
  }

  private resolveBySaying(sentence: string): void {
    if (!maySayFixed(sentence)) return;
    for (const error of this.tracked) {
      const item = this.probes.errors[error.at]!;
      if (!item.resolved && saysFixed(sentence, { message: item.text, fromCommand: error.fromCommand })) this.resolve(error.at);
    }
  }

  private resolve(at: number): void {
    const item = this.probes.errors[at]!;
    if (!item.resolved) this.probes.errors[at] = { ...item, resolved: true };
  }

  finish(): RetentionProbes {
    // A question or plan the user already answered is not open any more… unless nothing else is.
    if (this.lastPlan && (this.lastPlan.index > this.lastUserIndex || !this.lastPlan.text.endsWith("?")))
      this.probes.plan.push(this.lastPlan);
    if (this.unjudged.requests > 0 || this.unjudged.constraints > 0) this.probes.unjudged = { ...this.unjudged };
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
  const unjudged = { requests: 0, constraints: 0 };
  for (const probes of all) {
    unjudged.requests += probes.unjudged?.requests ?? 0;
    unjudged.constraints += probes.unjudged?.constraints ?? 0;
  }
  if (unjudged.requests > 0 || unjudged.constraints > 0) merged.unjudged = unjudged;
  return merged;
}
