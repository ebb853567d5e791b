/**
 * One pass over the messages, collecting what a summary is made of: the user's requests and
 * constraints in their own words, what was done (tool calls with their targets, the assistant's
 * own "I fixed…" statements), decisions, errors and whether they were resolved later, the last
 * open request, and the exact names (paths, code spans, identifiers, URLs) worth keeping.
 */
import type { ContextMessage, UserContentBlock } from "@base-context/protocol";
import { classifyToolCall, errorExcerpt, reportedExitCode, type ActionKind } from "../../core/retention/tools.js";
import { clip, extractCodeSpans, extractIdentifiers, extractPaths, extractUrls, firstLine, OrderedSet, sentences } from "../../core/retention/text.js";

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
  /** The telling line of the output, verbatim. */
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
  readonly requests: Noted[];
  readonly constraints: Noted[];
  readonly decisions: Noted[];
  readonly statements: Noted[];
  /** Plans and open questions from the last assistant text. */
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
  /** The latest non-trivial request, when no finished answer followed it. */
  readonly openRequest?: Noted;
  /** Some turn in the range ended with a finished answer. */
  readonly anyTurnFinished: boolean;
  readonly lastTurnAborted: boolean;
}

const TRIVIAL_REQUEST =
  /^(?:y|yes|yep|yeah|ok|okay|k|sure|go|go on|go ahead|continue|proceed|do it|please do|please continue|keep going|thanks|thank you|thx|lgtm|sounds good|great|nice|perfect|correct|right|no|nope|done)[.!]*$/i;
const CONSTRAINT =
  /\b(?:must|mustn't|should|shouldn't|don't|do not|never|always|prefer|avoid|make sure|ensure|only|without|instead of|keep|no need|not allowed|required|require|needs? to|have to|has to|can't|cannot|use|using|stick to|do it in)\b/i;
export function isTrivialRequest(text: string): boolean {
  return TRIVIAL_REQUEST.test(text.trim());
}

const CONSTRAINT_START =
  /^(?:please\s+)?(?:must|never|always|don't|do not|avoid|prefer|make sure|ensure|only|keep|use|stick to|no need|we must|you must|it must|it should|we should|you should)\b/i;
// "Great. Now also…": acknowledgements before the actual request.
const LEADING_FILLER = /^(?:(?:great|thanks|thank you|ok|okay|nice|perfect|cool|good|awesome|sure|alright|yes|yep)\b[.!,]*\s+)+/i;

function withoutFiller(text: string): string {
  const trimmed = text.trim();
  const stripped = trimmed.replace(LEADING_FILLER, "");
  return stripped.length > 0 ? stripped.charAt(0).toUpperCase() + stripped.slice(1) : trimmed;
}

const DONE_STATEMENT =
  /^(?:(?:i|we)(?:'ve| have)?\s+(?:now\s+|also\s+|just\s+|successfully\s+)?)?(?:added|fixed|updated|created|implemented|refactored|removed|renamed|moved|replaced|wrote|rewrote|changed|extracted|migrated|converted|installed|configured|deleted|split|merged|resolved|verified|confirmed|switched|introduced|cleaned|simplified|documented|tested|ported|wired|bumped|upgraded)\b|\b(?:tests?|build|typecheck|lint|ci)\s+(?:now\s+|all\s+)?(?:pass(?:es|ed)?|succeed(?:s|ed)?|(?:is|are) green)\b|^(?:done|all done|finished)\b/i;
const DECISION =
  /\b(?:decided|decide to|chose|choose to|went with|go with|going with|opted|settled on|instead of|rather than|switch(?:ed)? to|root cause|the fix is|trade-?off|approach is)\b/i;
const PLAN =
  /^(?:next,?\s+|then,?\s+|now,?\s+|after that,?\s+)?(?:i'll|i will|let me|let's|we'll|we will|i'm going to|we're going to|i need to|we need to|i still need|we still need|still need|todo|to do:|remaining|next step)\b/i;

export function collectFacts(messages: readonly ContextMessage[]): Facts {
  const requests: Noted[] = [];
  const constraints: Noted[] = [];
  const decisions: Noted[] = [];
  const statements: Noted[] = [];
  const actions = new Map<string, Action>();
  const errors: ErrorFact[] = [];
  const paths = new OrderedSet();
  const codeSpans = new OrderedSet();
  const identifiers = new OrderedSet();
  const urls = new OrderedSet();
  const notes: Noted[] = [];
  const embeddedSummaries: string[] = [];
  const callActions = new Map<string, string>();
  const seenSentences = new OrderedSet();

  let lastRequest: Noted | undefined;
  let answered = true;
  let anyTurnFinished = false;
  let lastTurnAborted = false;
  let lastAssistantText: Noted | undefined;

  const noteNames = (text: string, fromUser: boolean): void => {
    for (const path of extractPaths(text)) paths.add(path);
    for (const url of extractUrls(text)) urls.add(url);
    if (!fromUser) return;
    for (const span of extractCodeSpans(text)) codeSpans.add(span);
    for (const name of extractIdentifiers(text)) identifiers.add(name);
  };

  const recordOutcome = (key: string, ok: boolean, index: number, error?: Omit<ErrorFact, "resolved" | "actionKey" | "index">): void => {
    const action = actions.get(key);
    if (action) action.outcome = ok ? "ok" : "error";
    if (ok) {
      for (const earlier of errors) {
        if (earlier.actionKey === key && !earlier.resolved) {
          earlier.resolved = true;
          earlier.resolvedIndex = index;
        }
      }
    } else if (error) {
      errors.push({ ...error, index, resolved: false, actionKey: key });
    }
  };

  messages.forEach((message, index) => {
    switch (message.role) {
      case "user": {
        const text = contentText(message.content);
        if (looksLikeSummary(text)) {
          embeddedSummaries.push(unwrapSummary(text));
          return;
        }
        if (text.trim().length === 0) return;
        answered = false;
        noteNames(text, true);
        const request = { text: withoutFiller(text), index };
        requests.push(request);
        if (!TRIVIAL_REQUEST.test(clip(text, 40))) lastRequest = request;
        sentences(request.text).forEach((sentence, position) => {
          // A message's first sentence is usually the request itself (it is in the Goal); it is
          // a constraint only when it reads like one ("Never…", "Always use…").
          const isConstraint = position === 0 ? CONSTRAINT_START.test(sentence) : CONSTRAINT.test(sentence);
          if (!sentence.endsWith("?") && isConstraint && seenSentences.add(sentence)) {
            constraints.push({ text: clip(sentence, 300), index });
          }
        });
        return;
      }
      case "assistant": {
        let text = "";
        let calledTools = false;
        for (const block of message.content) {
          if (block.type === "text") text += (text ? "\n" : "") + block.text;
          else if (block.type === "toolCall") {
            calledTools = true;
            const action = classifyToolCall(block.name, block.arguments);
            const key = `${action.kind}:${action.toolName}:${action.target}`;
            callActions.set(block.id, key);
            const existing = actions.get(key);
            if (existing) {
              existing.count++;
              existing.lastIndex = index;
            } else {
              actions.set(key, { ...action, count: 1, lastIndex: index, outcome: "unknown" });
            }
            if (action.kind === "read" || action.kind === "modify") paths.add(action.target);
          }
        }
        if (text.trim().length > 0) {
          lastAssistantText = { text, index };
          noteNames(text, false);
          for (const sentence of sentences(text)) {
            if (sentence.endsWith("?")) continue;
            if (DECISION.test(sentence)) {
              if (seenSentences.add(sentence)) decisions.push({ text: clip(sentence, 280), index });
            } else if (DONE_STATEMENT.test(sentence) && seenSentences.add(sentence)) {
              statements.push({ text: clip(sentence, 240), index });
            }
          }
        }
        if (message.stopReason === "error" && message.errorMessage) {
          errors.push({ what: "model call", message: clip(message.errorMessage, 240), index, resolved: false, actionKey: "model" });
        }
        lastTurnAborted = message.stopReason === "aborted";
        const finished = message.stopReason === "stop" || (message.stopReason === undefined && !calledTools && text.trim().length > 0);
        if (finished) {
          answered = true;
          anyTurnFinished = true;
          recordOutcome("model", true, index);
        } else if (calledTools || message.stopReason !== undefined) {
          answered = false;
        }
        return;
      }
      case "toolResult": {
        const key = callActions.get(message.toolCallId);
        const text = contentText(message.content);
        const action = key === undefined ? undefined : actions.get(key);
        const exitCode = action?.kind === "run" ? reportedExitCode(text) : undefined;
        if (action && exitCode !== undefined) action.exitCode = exitCode;
        const failed = message.isError === true || (exitCode !== undefined && exitCode !== 0);
        const resultKey = key ?? `other:${message.toolName}:`;
        const what = action ? describeAction(action) : `\`${message.toolName}\``;
        recordOutcome(resultKey, !failed, index, { what: exitCode ? `${what} (exit ${exitCode})` : what, message: errorExcerpt(text) });
        return;
      }
      case "bashExecution": {
        if (message.excludeFromContext === true) return;
        const key = `run:!:${clip(message.command, 160)}`;
        const existing = actions.get(key);
        if (existing) {
          existing.count++;
          existing.lastIndex = index;
        } else {
          actions.set(key, { kind: "run", target: clip(message.command, 160), toolName: "!", count: 1, lastIndex: index, outcome: "unknown" });
        }
        const action = actions.get(key)!;
        if (typeof message.exitCode === "number") action.exitCode = message.exitCode;
        if (message.cancelled) {
          notes.push({ text: `User cancelled \`${clip(message.command, 120)}\``, index });
          return;
        }
        const failed = typeof message.exitCode === "number" && message.exitCode !== 0;
        recordOutcome(key, !failed, index, { what: `\`${clip(message.command, 120)}\` (exit ${message.exitCode})`, message: errorExcerpt(message.output) });
        return;
      }
      case "custom": {
        const text = contentText(message.content);
        if (looksLikeSummary(text)) embeddedSummaries.push(unwrapSummary(text));
        else if (text.trim().length > 0) notes.push({ text: `${message.customType}: ${firstLine(text, 200)}`, index });
        return;
      }
      case "compactionSummary":
      case "branchSummary":
        embeddedSummaries.push(message.summary);
        return;
    }
  });

  const plans: Noted[] = [];
  let question: Noted | undefined;
  if (lastAssistantText) {
    const last = lastAssistantText;
    for (const sentence of sentences(last.text)) {
      if (PLAN.test(sentence) && !DONE_STATEMENT.test(sentence)) plans.push({ text: clip(sentence, 240), index: last.index });
    }
    const all = sentences(last.text);
    const final = all[all.length - 1];
    // A question the assistant ended on, with no user message after it: the user owes an answer.
    if (final?.endsWith("?") && (lastRequest === undefined || last.index > lastRequest.index)) question = { text: clip(final, 240), index: last.index };
  }

  return {
    messageCount: messages.length,
    requests,
    constraints,
    decisions,
    statements,
    plans,
    ...(question ? { question } : {}),
    actions,
    errors,
    paths,
    codeSpans,
    identifiers,
    urls,
    notes,
    embeddedSummaries,
    ...(!answered && lastRequest ? { openRequest: lastRequest } : {}),
    anyTurnFinished,
    lastTurnAborted,
  };
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
}

function contentText(content: string | readonly UserContentBlock[]): string {
  if (typeof content === "string") return content;
  let text = "";
  for (const block of content) {
    if (block.type === "text") text += (text ? "\n" : "") + block.text;
    else text += (text ? "\n" : "") + "[image]";
  }
  return text;
}

/** Summaries that reached the range as user/custom messages (wrapped for the LLM). */
function looksLikeSummary(text: string): boolean {
  return text.includes("<summary>") && /^## (?:Goal|Original Request)\b/m.test(text);
}

function unwrapSummary(text: string): string {
  const start = text.indexOf("<summary>");
  const end = text.lastIndexOf("</summary>");
  return start >= 0 && end > start ? text.slice(start + "<summary>".length, end).trim() : text;
}
