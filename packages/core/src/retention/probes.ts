/**
 * Retention probes (docs/retention.md): what a successor must not lose from the messages a
 * summary replaces. Pure and linear in the input; the extractive summarizer is built on the same
 * readings, and every summary is checked against them.
 */
import type { ContextMessage } from "@base-context/protocol";
import { errorLine } from "./errors.js";
import { FailureTracker, type Failure } from "./failures.js";
import type { HumanWords } from "./human-words.js";
import { commandFailureKeys, commandKey, commandKeys, MOVED_ON } from "./resolution.js";
import { clip, normalizeKey, sentences } from "./text.js";
import { classifyToolCall } from "./tools.js";
import { isInjectedText, isInterruption } from "../injected.js";
import { bashFailed, callDetails, contentText, failureKeys, readToolResult, successKeys, userCommandOutput, type ReadCall } from "./tool-results.js";
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

/** Collects probes in one pass; `add` keeps the first occurrence of each item. */
class ProbeCollector implements MessageReader {
  readonly probes = emptyProbes();
  private readonly seen = new Map<ProbeKind, Map<string, number>>(PROBE_KINDS.map((k) => [k, new Map()]));
  private readonly calls = new Map<string, ReadCall & { keys: string[] }>();
  private readonly failures = new FailureTracker();
  private readonly unjudged: Unjudged = { requests: 0, constraints: 0 };
  private lastUserIndex = -1;
  private lastPlan: ProbeItem | undefined;
  /** The latest command the user ran through the harness (its output follows in another injected text). */
  private userCommand: string | undefined;

  /**
   * `carried`: the errors an earlier summary listed as standing (`carriedProbes`), tracked as
   * failures from before the range, so that what the range fixes is fixed (the same command
   * succeeding, failing differently, the model answering again) instead of carried for ever.
   */
  constructor(carried: readonly ProbeItem[] = []) {
    for (const error of carried) {
      // Repair names the command it failed in, cut with "…" when long.
      const what = error.detail ?? "";
      const command = what.replace(/…$/, "");
      const keys =
        what === MODEL_CALL
          ? { actionKey: MODEL, fixedBy: [MODEL], fromCommand: false }
          : { actionKey: `run:${commandKey(command)}`, fixedBy: commandFailureKeys(command), fromCommand: true };
      this.failures.failed({ what, message: error.text, index: -1, carried: true, ...keys });
    }
  }

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
        const call = { kind: action.kind, target: action.target, toolName: action.toolName, ...callDetails(block.arguments) };
        this.calls.set(block.id, { ...call, keys: successKeys(call) });
        if ((action.kind === "read" || action.kind === "modify") && action.target.length > 0) {
          this.add("files", { text: action.target, index, detail: action.kind === "modify" ? "modified" : "read" });
        }
      }
    }
    const calledTools = message.content.some((block) => block.type === "toolCall");
    // The user stopped the turn (pi's Esc): what stood then stays standing.
    if (message.stopReason === "aborted") this.failures.interrupted();
    if (message.stopReason === "error" && message.errorMessage) {
      const failure = { what: MODEL_CALL, message: errorLine(message.errorMessage), index };
      this.failures.failed({ ...failure, actionKey: MODEL, fixedBy: [MODEL], fromCommand: false });
    } else if (message.stopReason === "stop" || (message.stopReason === undefined && !calledTools && text.trim().length > 0)) {
      // A finished answer: the model works again, and the agent moved past what it could not read.
      this.failures.succeeded([MODEL, MOVED_ON], index, false);
    } else if (calledTools) {
      // A call: the model works again.
      this.failures.succeeded([MODEL], index, false);
    }
    if (text.trim().length === 0) return;
    const said = sentences(text);
    for (const sentence of said) this.failures.said(sentence, index);
    // The latest text decides: a plan stated earlier was overtaken by the work after it.
    const final = said[said.length - 1];
    const plan = final?.endsWith("?") ? final : said.filter(isPlanSentence).pop();
    this.lastPlan = plan === undefined ? undefined : { text: clip(plan, 240), index };
  }

  toolResult(message: Extract<ContextMessage, { role: "toolResult" }>, index: number): void {
    const call = this.calls.get(message.toolCallId);
    const reading = readToolResult(call, message);
    if (reading.human) this.humanWords(reading.human, index);
    if (!reading.failed) {
      this.failures.succeeded(call?.keys ?? [`tool:${message.toolName}`], index);
      return;
    }
    const keys = failureKeys(call, message, reading, call ? `${call.kind}:${call.target}` : `tool:${message.toolName}`);
    const what = call?.target ? call.target : message.toolName;
    this.failures.failed({ what, message: reading.message, index, ...keys, ...(reading.refused ? { refused: true } : {}) });
  }

  /** The harness's text: the output of a command the user ran through it (a slash command) fails or works like theirs. */
  custom(customType: string, text: string, index: number): void {
    if (!isInjectedText(customType)) return;
    if (isInterruption(text)) this.failures.interrupted();
    const ran = userCommandOutput(text);
    if (ran.command !== undefined) this.userCommand = ran.command;
    if (this.userCommand === undefined || !/<local-command-(?:stdout|stderr)>/.test(text)) return;
    const keys = commandKeys(this.userCommand);
    if (ran.error === undefined) this.failures.succeeded(keys, index);
    else {
      const failure = { what: this.userCommand, message: ran.error, index, actionKey: keys[0]! };
      this.failures.failed({ ...failure, fixedBy: keys.slice(0, 1), fromCommand: true });
    }
  }

  bash(message: Extract<ContextMessage, { role: "bashExecution" }>, index: number): void {
    if (message.excludeFromContext === true || message.cancelled) return;
    if (!bashFailed(message)) {
      this.failures.succeeded(commandKeys(message.command), index);
      return;
    }
    const { command } = message;
    const failure = { what: command, message: errorLine(message.output), index, actionKey: `run:${commandKey(command)}` };
    this.failures.failed({ ...failure, fixedBy: commandFailureKeys(command), fromCommand: true });
  }

  /** The human's words in a tool result: typed words read as a user message; answers asked for work when they say so. */
  private humanWords(words: HumanWords, index: number): void {
    for (const typed of words.typed) this.user(typed, index);
    for (const { answer, chosen } of words.answers) {
      this.lastUserIndex = index;
      // An answer is the user's choice, not a rule the probe can be sure of: seen, not counted.
      this.unjudged.constraints++;
      // An option picked from those offered chose how, it asked for nothing; words typed instead may ask.
      if (chosen !== true && readRequest(answer) === "yes") this.add("requests", { text: clip(answer, 300), index });
    }
  }

  finish(): RetentionProbes {
    this.addErrors();
    // A question or plan the user already answered is not open any more… unless nothing else is.
    if (this.lastPlan && (this.lastPlan.index > this.lastUserIndex || !this.lastPlan.text.endsWith("?")))
      this.probes.plan.push(this.lastPlan);
    if (this.unjudged.requests > 0 || this.unjudged.constraints > 0) this.probes.unjudged = { ...this.unjudged };
    return this.probes;
  }

  /** One item per error line, where it first occurred; standing when its latest occurrence stands. */
  private addErrors(): void {
    const latest = new Map<string, Failure>();
    for (const failure of this.failures.failures) latest.set(normalizeKey(failure.message), failure);
    for (const failure of this.failures.failures) {
      const key = normalizeKey(failure.message);
      const last = latest.get(key);
      if (key.length === 0 || last === undefined) continue;
      latest.delete(key);
      const item = { text: failure.message, index: failure.index, detail: failure.what };
      this.probes.errors.push(last.resolved ? { ...item, resolved: true } : item);
    }
  }
}

const MODEL = "model";
/** How a failed model call is named (an error's `detail`). */
const MODEL_CALL = "model call";

/**
 * The probes of a range of messages (what a summary of them is checked against); `carriedErrors`:
 * an earlier summary's standing errors (`carriedProbes(…).errors`), listed again unless the range
 * resolves them.
 */
export function probeMessages(messages: readonly ContextMessage[], carriedErrors: readonly ProbeItem[] = []): RetentionProbes {
  const collector = new ProbeCollector(carriedErrors);
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
