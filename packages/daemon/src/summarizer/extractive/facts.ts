/**
 * One pass over the messages, collecting what a summary is made of, read the way the retention
 * probes read them (docs/retention.md): the user's requests and constraints in their own words,
 * what was done (tool calls with their targets, the assistant's own "I fixed…" statements),
 * decisions (minus those a user correction rejected), errors (real failures only, by their first
 * line) and whether they were resolved later, the last plan or open question, and exact names.
 */
import type { ContextMessage } from "@base-context/protocol";
import {
  bashFailed,
  classifyToolCall,
  constraintSentences,
  contentText,
  errorLine,
  isGoalRequest,
  isPlanSentence,
  isSummaryText,
  junkKind,
  reportedExitCode,
  requestText,
  toolResultFailed,
  type ActionKind,
} from "../../core/index.js";
import {
  clip,
  extractCodeSpans,
  extractIdentifiers,
  extractPaths,
  extractUrls,
  firstLine,
  OrderedSet,
  sentences,
} from "../../core/retention/text.js";

/** A piece of text and the index of the message it came from (recency drives priorities). */
export interface Noted {
  readonly text: string;
  readonly index: number;
}

export interface Action {
  readonly kind: ActionKind;
  readonly target: string;
  readonly toolName: string;
  count: number;
  lastIndex: number;
  /** The latest outcome seen for this action. */
  outcome: "ok" | "error" | "unknown";
  exitCode?: number;
}

export interface ErrorFact {
  /** What failed, e.g. "`pnpm test` (exit 1)" or "edit `src/a.ts`". */
  readonly what: string;
  /** The first line of the error, as the retention probe reads it. */
  readonly message: string;
  readonly index: number;
  /** The same action succeeded later in the range… */
  resolved: boolean;
  /** …in this message. */
  resolvedIndex?: number;
  readonly actionKey: string;
}

export interface Facts {
  readonly messageCount: number;
  /** User messages that state a goal (no slash commands, one-word commands or acknowledgements). */
  readonly requests: Noted[];
  readonly constraints: Noted[];
  /** Decisions still standing: a user correction removes those of the turn it answers. */
  readonly decisions: Noted[];
  readonly statements: Noted[];
  /** Plans of the last assistant text. */
  readonly plans: Noted[];
  readonly question?: Noted;
  readonly actions: Map<string, Action>;
  readonly errors: ErrorFact[];
  readonly paths: OrderedSet;
  readonly codeSpans: OrderedSet;
  readonly identifiers: OrderedSet;
  readonly urls: OrderedSet;
  readonly notes: Noted[];
  /** Summaries found inside the range (compaction / branch summary messages). */
  readonly embeddedSummaries: string[];
  /** The latest goal request, when no finished answer followed it. */
  readonly openRequest?: Noted;
  /** Some turn in the range ended with a finished answer. */
  readonly anyTurnFinished: boolean;
  readonly lastTurnAborted: boolean;
}

const DONE_STATEMENT =
  /^(?:(?:i|we)(?:'ve| have)?\s+(?:now\s+|also\s+|just\s+|successfully\s+)?)?(?:added|fixed|updated|created|implemented|refactored|removed|renamed|moved|replaced|wrote|rewrote|changed|extracted|migrated|converted|installed|configured|deleted|split|merged|resolved|verified|confirmed|switched|introduced|cleaned|simplified|documented|tested|ported|wired|bumped|upgraded|reverted)\b|\b(?:tests?|build|typecheck|lint|ci)\s+(?:now\s+|all\s+)?(?:pass(?:es|ed)?|succeed(?:s|ed)?|(?:is|are) green)\b/i;
const DECISION =
  /\b(?:decided|decide to|chose|choose to|went with|go with|going with|opted|settled on|switch(?:ed)? to|the fix is|trade-?off|approach is|instead of|rather than)\b/i;
/** "…throws instead of answering 401": a description of a failure is not a decision. */
const FAILURE_WORDS = /\b(?:fail(?:s|ed|ure|ures)?|errors?|throws?|still|crash(?:es|ed)?|broken)\b/i;
/** A user message that takes back what the assistant just did or decided. */
const CORRECTION =
  /^(?:no\b|nope\b|wait\b|actually\b|hmm\b|not\s+(?:that|like that)\b|revert\b|undo\b|rather\b)|\b(?:doesn't look right|does not look right|that's wrong|that is wrong|no,\s+we want|no,\s+(?:use|keep|put|do)\b|not what i (?:asked|meant|want))/i;
const MIN_SENTENCE_WORDS = 4;
const CHECKMARKS = /^[✓✔✅☑️\s]+/;

export function isTrivialRequest(text: string): boolean {
  return !isGoalRequest(text);
}

/** A sentence worth listing: words, not a heading, a label, a bare checkmark or a line of code. */
function isProse(sentence: string): boolean {
  const text = sentence.replace(CHECKMARKS, "").trim();
  if (text.split(/\s+/).length < MIN_SENTENCE_WORDS) return false;
  return junkKind(text) === undefined && !/^#{1,6}\s/.test(text) && !/^\*\*/.test(text);
}

class FactCollector {
  readonly requests: Noted[] = [];
  readonly constraints: Noted[] = [];
  /** Decisions per assistant turn, so a correction can take back the latest turn's. */
  private readonly decisionTurns: Noted[][] = [[]];
  readonly statements: Noted[] = [];
  readonly actions = new Map<string, Action>();
  readonly errors: ErrorFact[] = [];
  readonly paths = new OrderedSet();
  readonly codeSpans = new OrderedSet();
  readonly identifiers = new OrderedSet();
  readonly urls = new OrderedSet();
  readonly notes: Noted[] = [];
  readonly embeddedSummaries: string[] = [];
  private readonly callActions = new Map<string, string>();
  private readonly seenSentences = new OrderedSet();
  private lastRequest: Noted | undefined;
  private lastUserIndex = -1;
  private answered = true;
  anyTurnFinished = false;
  lastTurnAborted = false;
  private lastPlans: Noted[] = [];
  private lastAssistantIndex = -1;
  private lastAssistantText: Noted | undefined;

  constructor(private readonly messageCount: number) {}

  user(text: string, index: number): void {
    if (isSummaryText(text)) {
      this.embeddedSummaries.push(unwrapSummary(text));
      return;
    }
    if (text.trim().length === 0) return;
    this.answered = false;
    this.lastUserIndex = index;
    this.noteNames(text, true);
    if (CORRECTION.test(text.trim())) this.correction(text, index);
    if (!isGoalRequest(text)) return;
    const request = { text: sentences(requestText(text)).join(" "), index };
    if (request.text.length === 0) return;
    this.requests.push(request);
    this.lastRequest = request;
    for (const sentence of constraintSentences(text)) {
      if (this.seenSentences.add(sentence)) this.constraints.push({ text: clip(sentence, 300), index });
    }
  }

  /** The user took back the latest turn's decisions; their own words are the decision now. */
  private correction(text: string, index: number): void {
    this.decisionTurns[this.decisionTurns.length - 1] = [];
    const words = sentences(text).filter((s) => isProse(s) && !/\b(?:doesn't|does not) look right\b/i.test(s));
    if (words.length > 0) this.decisionTurns.push([{ text: `User correction: ${clip(words.join(" "), 260)}`, index }], []);
  }

  assistant(message: Extract<ContextMessage, { role: "assistant" }>, index: number): void {
    let text = "";
    let calledTools = false;
    for (const block of message.content) {
      if (block.type === "text") text += (text ? "\n" : "") + block.text;
      else if (block.type === "toolCall") {
        calledTools = true;
        this.toolCall(block.id, block.name, block.arguments, index);
      }
    }
    // A new turn's decisions start after the user spoke.
    if (this.lastUserIndex > this.lastAssistantIndex) this.decisionTurns.push([]);
    this.lastAssistantIndex = index;
    if (text.trim().length > 0) this.assistantText(text, index);
    if (message.stopReason === "error" && message.errorMessage) {
      this.errors.push({ what: "model call", message: errorLine(message.errorMessage), index, resolved: false, actionKey: "model" });
    }
    this.lastTurnAborted = message.stopReason === "aborted";
    const finished = message.stopReason === "stop" || (message.stopReason === undefined && !calledTools && text.trim().length > 0);
    if (finished) {
      this.answered = true;
      this.anyTurnFinished = true;
      this.recordOutcome("model", true, index);
    } else if (calledTools || message.stopReason !== undefined) {
      this.answered = false;
    }
  }

  private toolCall(id: string, name: string, args: Readonly<Record<string, unknown>>, index: number): void {
    const action = classifyToolCall(name, args);
    // A command is the same action whoever ran it (a tool or the user's `!cmd`).
    const key = action.kind === "run" ? runKey(action.target) : `${action.kind}:${action.toolName}:${action.target}`;
    this.callActions.set(id, key);
    this.countAction(key, { ...action, count: 0, lastIndex: index, outcome: "unknown" }, index);
    if (action.kind === "read" || action.kind === "modify") this.paths.add(action.target);
  }

  private countAction(key: string, fresh: Action, index: number): Action {
    const action = this.actions.get(key) ?? fresh;
    action.count++;
    action.lastIndex = index;
    this.actions.set(key, action);
    return action;
  }

  private assistantText(text: string, index: number): void {
    this.lastAssistantText = { text, index };
    this.noteNames(text, false);
    const plans: Noted[] = [];
    const turn = this.decisionTurns[this.decisionTurns.length - 1]!;
    for (const sentence of sentences(text)) {
      if (sentence.endsWith("?") || !isProse(sentence)) continue;
      const clean = sentence.replace(CHECKMARKS, "");
      if (isPlanSentence(clean)) plans.push({ text: clip(clean, 240), index });
      if (DECISION.test(clean) && !FAILURE_WORDS.test(clean) && !isPlanSentence(clean)) {
        if (this.seenSentences.add(clean)) turn.push({ text: clip(clean, 280), index });
      } else if (DONE_STATEMENT.test(clean) && this.seenSentences.add(clean)) {
        this.statements.push({ text: clip(clean, 240), index });
      }
    }
    // The latest text decides: an older plan was overtaken by the work after it.
    this.lastPlans = plans;
  }

  toolResult(message: Extract<ContextMessage, { role: "toolResult" }>, index: number): void {
    const key = this.callActions.get(message.toolCallId);
    const action = key === undefined ? undefined : this.actions.get(key);
    const text = contentText(message.content);
    const exitCode = action?.kind === "run" ? reportedExitCode(text) : undefined;
    const failed = toolResultFailed(action, message);
    // The latest run's status: a success that reports no code exited 0.
    if (action?.kind === "run") action.exitCode = exitCode ?? (message.isError === true ? 1 : 0);
    const what = action ? describeAction(action) : `\`${message.toolName}\``;
    const error = failed ? { what: exitCode ? `${what} (exit ${exitCode})` : what, message: errorLine(text) } : undefined;
    this.recordOutcome(key ?? `other:${message.toolName}:`, !failed, index, error);
  }

  bash(message: Extract<ContextMessage, { role: "bashExecution" }>, index: number): void {
    if (message.excludeFromContext === true) return;
    const target = clip(message.command, 160);
    const key = runKey(target);
    const action = this.countAction(key, { kind: "run", target, toolName: "!", count: 0, lastIndex: index, outcome: "unknown" }, index);
    if (typeof message.exitCode === "number") action.exitCode = message.exitCode;
    if (message.cancelled) {
      this.notes.push({ text: `User cancelled \`${clip(message.command, 120)}\``, index });
      return;
    }
    const failed = bashFailed(message);
    const error = failed
      ? { what: `\`${clip(message.command, 120)}\` (exit ${message.exitCode})`, message: errorLine(message.output) }
      : undefined;
    this.recordOutcome(key, !failed, index, error);
  }

  custom(customType: string, text: string, index: number): void {
    if (isSummaryText(text)) this.embeddedSummaries.push(unwrapSummary(text));
    else if (text.trim().length > 0) {
      const line = firstLine(text, 200);
      if (junkKind(line) === undefined) this.notes.push({ text: `${customType}: ${line}`, index });
    }
  }

  private recordOutcome(key: string, ok: boolean, index: number, error?: Pick<ErrorFact, "what" | "message">): void {
    const action = this.actions.get(key);
    if (action) action.outcome = ok ? "ok" : "error";
    if (ok) {
      for (const earlier of this.errors) {
        if (earlier.actionKey === key && !earlier.resolved) {
          earlier.resolved = true;
          earlier.resolvedIndex = index;
        }
      }
    } else if (error) {
      this.errors.push({ ...error, index, resolved: false, actionKey: key });
    }
  }

  private noteNames(text: string, fromUser: boolean): void {
    for (const path of extractPaths(text)) this.paths.add(path);
    for (const url of extractUrls(text)) this.urls.add(url);
    if (!fromUser) return;
    for (const span of extractCodeSpans(text)) this.codeSpans.add(span);
    for (const name of extractIdentifiers(text)) this.identifiers.add(name);
  }

  /** The question the assistant ended on, when the user has not answered it. */
  private question(): Noted | undefined {
    const last = this.lastAssistantText;
    if (!last || last.index < this.lastUserIndex) return undefined;
    const final = sentences(last.text).pop();
    return final?.endsWith("?") ? { text: clip(final, 240), index: last.index } : undefined;
  }

  facts(): Facts {
    const question = this.question();
    return {
      messageCount: this.messageCount,
      requests: this.requests,
      constraints: this.constraints,
      decisions: this.decisionTurns.flat(),
      statements: this.statements,
      plans: this.lastPlans,
      ...(question ? { question } : {}),
      actions: this.actions,
      errors: this.errors,
      paths: this.paths,
      codeSpans: this.codeSpans,
      identifiers: this.identifiers,
      urls: this.urls,
      notes: this.notes,
      embeddedSummaries: this.embeddedSummaries,
      ...(!this.answered && this.lastRequest ? { openRequest: this.lastRequest } : {}),
      anyTurnFinished: this.anyTurnFinished,
      lastTurnAborted: this.lastTurnAborted,
    };
  }
}

function runKey(command: string): string {
  return `run:${clip(command, 160)}`;
}

export function collectFacts(messages: readonly ContextMessage[]): Facts {
  const collector = new FactCollector(messages.length);
  messages.forEach((message, index) => {
    switch (message.role) {
      case "user":
        return collector.user(contentText(message.content), index);
      case "assistant":
        return collector.assistant(message, index);
      case "toolResult":
        return collector.toolResult(message, index);
      case "bashExecution":
        return collector.bash(message, index);
      case "custom":
        return collector.custom(message.customType, contentText(message.content), index);
      case "compactionSummary":
      case "branchSummary":
        collector.embeddedSummaries.push(message.summary);
        return;
    }
  });
  return collector.facts();
}

export function describeAction(action: Pick<Action, "kind" | "target" | "toolName">): string {
  const target = action.target ? `\`${action.target}\`` : "";
  switch (action.kind) {
    case "read":
      return `read ${target}`;
    case "modify":
      return `${action.toolName} ${target}`;
    case "run":
      return target || `\`${action.toolName}\``;
    case "search":
      return `searched ${target}`.trim();
    case "other":
      return action.target ? `\`${action.toolName}\`(${action.target})` : `\`${action.toolName}\``;
  }
  return `\`${action.toolName}\``;
}

function unwrapSummary(text: string): string {
  const start = text.indexOf("<summary>");
  const end = text.lastIndexOf("</summary>");
  return start >= 0 && end > start ? text.slice(start + "<summary>".length, end).trim() : text;
}
