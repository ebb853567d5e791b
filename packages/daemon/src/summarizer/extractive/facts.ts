/**
 * One pass over the messages, collecting what a summary is made of, read the way the retention
 * probes read them (docs/retention.md): the user's requests and constraints in their own words
 * (and in tool results: answers to the agent's questions, a refusal's reason), what was done (tool
 * calls with their targets, files moved or removed, the assistant's own "I fixed…" statements, what
 * says work was finished), decisions (minus those a user correction rejected), errors (real
 * failures only, by their first line, a previous summary's blockers among them) and whether they
 * stopped standing, the last plan or open question, and exact names.
 */
import type { ContextMessage } from "@base-context/protocol";
import {
  answerText,
  clip,
  contentText,
  constraintSentences,
  extractCodeSpans,
  extractIdentifiers,
  extractPaths,
  extractUrls,
  firstLine,
  isInjectedText,
  isPlanSentence,
  isSummaryText,
  junkKind,
  OrderedSet,
  ownSentences,
  parseSummaryParts,
  ownWords,
  readMessages,
  readRequest,
  sentences,
  type MessageReader,
} from "@base-context/core";
import { ActionLog, type Action, type ErrorFact, type FileChange } from "./action-log.js";

export type { Action, ErrorFact, FileChange };

/** A piece of text and the index of the message it came from (recency drives priorities). */
export interface Noted {
  readonly text: string;
  readonly index: number;
}

export interface Facts {
  readonly messageCount: number;
  /** User messages that ask for work (docs/retention.md: read with precision first). */
  readonly requests: Noted[];
  /** Every user message that may ask for work (requests and the unsure ones), in order: the current task's thread. */
  readonly userTurns: (Noted & { readonly request: boolean })[];
  /** Index of the last tool call that changed or ran something. */
  readonly lastActionIndex: number;
  readonly constraints: Noted[];
  /** Decisions still standing: a user correction removes those of the turn it answers. */
  readonly decisions: Noted[];
  readonly statements: Noted[];
  /** Plans of the last assistant text. */
  readonly plans: Noted[];
  readonly question?: Noted;
  readonly actions: Map<string, Action>;
  readonly errors: readonly ErrorFact[];
  /** The failures still standing: the latest per action. */
  readonly standingErrors: ErrorFact[];
  /** The user's answers to the agent's questions (`"question"="answer"`), in order. */
  readonly answers: Noted[];
  /** What says work was finished: assistant sentences ("Closed X", "X is committed") and commands that succeeded (`gh issue close 42`). */
  readonly completions: Noted[];
  /** Files shell commands moved or removed. */
  readonly fileChanges: readonly FileChange[];
  /** The keys of the actions that succeeded (core `actionKeys`). */
  readonly succeededKeys: ReadonlySet<string>;
  /** The latest user message got a finished answer. */
  readonly answered: boolean;
  /** A split turn follows the range (summarized apart): the work goes on there. */
  readonly followedByTurn?: boolean;
  /** The split turn opens with the user's reply to the question the range ended on ("yes"): what they said to what. */
  readonly questionAnswered?: { readonly question: string; readonly reply: string };
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
/** A sentence saying work was finished ("PROJ-12 is closed", "Committed the fix"); not one saying it is not yet. */
const COMPLETION =
  /\b(?:closed|completed?|done|committed|merged|pushed|finished|resolved|implemented|fixed|written|created|added|released|published|shipped)\b/i;
const NOT_YET = /\b(?:not|n't|yet|still|needs?|remaining|pending|todo|to do|will|going to|next)\b/i;
const MIN_SENTENCE_WORDS = 4;
const CHECKMARKS = /^[✓✔✅☑️\s]+/;

/** A sentence worth listing: words, not a heading, a label, a bare checkmark or a line of code. */
function isProse(sentence: string): boolean {
  const text = sentence.replace(CHECKMARKS, "").trim();
  if (text.split(/\s+/).length < MIN_SENTENCE_WORDS) return false;
  return junkKind(text) === undefined && !/^#{1,6}\s/.test(text) && !/^\*\*/.test(text);
}

/** Exact names in first-seen order: paths and URLs from anyone, code spans and identifiers from the user. */
class ExactNames {
  readonly paths = new OrderedSet();
  readonly codeSpans = new OrderedSet();
  readonly identifiers = new OrderedSet();
  readonly urls = new OrderedSet();

  note(text: string, fromUser: boolean): void {
    for (const path of extractPaths(text)) this.paths.add(path);
    for (const url of extractUrls(text)) this.urls.add(url);
    if (!fromUser) return;
    for (const span of extractCodeSpans(text)) this.codeSpans.add(span);
    for (const name of extractIdentifiers(text)) this.identifiers.add(name);
  }
}

/** Decisions per assistant turn, so a user's correction can take back the latest turn's. */
class DecisionTurns {
  private readonly turns: Noted[][] = [[]];

  startTurn(): void {
    this.turns.push([]);
  }

  add(decision: Noted): void {
    this.turns[this.turns.length - 1]!.push(decision);
  }

  /** The latest turn's decisions are void; the correction's own words (if any) stand instead. */
  takeBack(correction: Noted | undefined): void {
    this.turns[this.turns.length - 1] = [];
    if (correction) this.turns.push([correction], []);
  }

  /** The decisions still standing, oldest first. */
  standing(): Noted[] {
    return this.turns.flat();
  }
}

/**
 * Where the conversation stands: whether the latest request got a finished answer, and the
 * assistant's latest text (its plans, or a question it ended on).
 */
class TurnState {
  lastRequest: Noted | undefined;
  lastUserIndex = -1;
  answered = true;
  anyTurnFinished = false;
  lastTurnAborted = false;
  lastPlans: Noted[] = [];
  lastAssistantIndex = -1;
  lastAssistantText: Noted | undefined;

  /** The question the assistant ended on, when the user has not answered it. */
  question(): Noted | undefined {
    const last = this.lastAssistantText;
    if (!last || last.index < this.lastUserIndex) return undefined;
    const final = sentences(last.text).pop();
    return final?.endsWith("?") ? { text: clip(final, 240), index: last.index } : undefined;
  }
}

/** The words worth keeping, by kind, each sentence once: the parts above do the rest. */
class FactCollector implements MessageReader {
  readonly requests: Noted[] = [];
  readonly userTurns: (Noted & { request: boolean })[] = [];
  readonly constraints: Noted[] = [];
  private lastActionIndex = -1;
  readonly statements: Noted[] = [];
  readonly notes: Noted[] = [];
  readonly answers: Noted[] = [];
  readonly completions: Noted[] = [];
  readonly embeddedSummaries: string[] = [];
  private readonly seenSentences = new OrderedSet();
  private readonly names = new ExactNames();
  private readonly decisions = new DecisionTurns();
  private readonly log = new ActionLog();
  private readonly turn = new TurnState();

  constructor(
    private readonly messageCount: number,
    carriedBlockers: readonly string[] = [],
  ) {
    this.log.carry(carriedBlockers, -1);
  }

  user(text: string, index: number): void {
    if (isSummaryText(text)) {
      this.summary(unwrapSummary(text), index);
      return;
    }
    if (text.trim().length === 0) return;
    this.turn.answered = false;
    this.turn.lastUserIndex = index;
    // The names the user typed, not those of what they pasted (a stack trace's frames, a log).
    this.names.note(ownWords(text), true);
    if (CORRECTION.test(text.trim())) this.correction(text, index);
    for (const sentence of constraintSentences(text)) {
      if (this.seenSentences.add(sentence)) this.constraints.push({ text: clip(sentence, 300), index });
    }
    const reading = readRequest(text);
    if (reading === "no") return;
    // The user's own words, as written (pasted output and code left out).
    const words = ownSentences(text).join(" ");
    if (words.length === 0) return;
    const request = { text: words, index };
    this.userTurns.push({ ...request, request: reading === "yes" });
    if (reading !== "yes") return;
    this.requests.push(request);
    this.turn.lastRequest = request;
  }

  /** The user took back the latest turn's decisions; their own words are the decision now. */
  private correction(text: string, index: number): void {
    const words = sentences(text).filter((s) => isProse(s) && !/\b(?:doesn't|does not) look right\b/i.test(s));
    this.decisions.takeBack(words.length > 0 ? { text: `User correction: ${clip(words.join(" "), 260)}`, index } : undefined);
  }

  assistant(message: Extract<ContextMessage, { role: "assistant" }>, index: number): void {
    let text = "";
    let calledTools = false;
    for (const block of message.content) {
      if (block.type === "text") text += (text ? "\n" : "") + block.text;
      else if (block.type === "toolCall") {
        calledTools = true;
        const action = this.log.toolCall(block.id, block.name, block.arguments, index);
        if (action.kind === "read" || action.kind === "modify") this.names.paths.add(action.target);
        if (action.kind === "modify" || action.kind === "run") this.lastActionIndex = index;
      }
    }
    const turn = this.turn;
    // A new turn's decisions start after the user spoke.
    if (turn.lastUserIndex > turn.lastAssistantIndex) this.decisions.startTurn();
    turn.lastAssistantIndex = index;
    if (text.trim().length > 0) this.assistantText(text, index);
    if (message.stopReason === "error" && message.errorMessage) this.log.modelFailed(message.errorMessage, index);
    turn.lastTurnAborted = message.stopReason === "aborted";
    if (turn.lastTurnAborted) this.log.failures.interrupted();
    const finished = message.stopReason === "stop" || (message.stopReason === undefined && !calledTools && text.trim().length > 0);
    if (finished) {
      turn.answered = true;
      turn.anyTurnFinished = true;
      this.log.modelAnswered(index);
    } else if (calledTools || message.stopReason !== undefined) {
      turn.answered = false;
      if (calledTools) this.log.modelWorked(index);
    }
  }

  private assistantText(text: string, index: number): void {
    this.turn.lastAssistantText = { text, index };
    this.names.note(text, false);
    const plans: Noted[] = [];
    for (const sentence of sentences(text)) {
      this.log.saidFixed(sentence, index);
      if (sentence.endsWith("?") || !isProse(sentence)) continue;
      const clean = sentence.replace(CHECKMARKS, "");
      if (COMPLETION.test(clean) && !NOT_YET.test(clean) && !isPlanSentence(clean)) {
        this.completions.push({ text: clip(clean, 300), index });
      }
      if (isPlanSentence(clean)) plans.push({ text: clip(clean, 240), index });
      if (DECISION.test(clean) && !FAILURE_WORDS.test(clean) && !isPlanSentence(clean)) {
        if (this.seenSentences.add(clean)) this.decisions.add({ text: clip(clean, 280), index });
      } else if (DONE_STATEMENT.test(clean) && this.seenSentences.add(clean)) {
        this.statements.push({ text: clip(clean, 240), index });
      }
    }
    // The latest text decides: an older plan was overtaken by the work after it.
    this.turn.lastPlans = plans;
  }

  toolResult(message: Extract<ContextMessage, { role: "toolResult" }>, index: number): void {
    const human = this.log.toolResult(message, index);
    if (!human) return;
    // The human's words in a tool's result (a refusal's reason, answers to the agent's questions) are theirs.
    for (const typed of human.typed) this.user(typed, index);
    for (const answer of human.answers) {
      this.answers.push({ text: answerText(answer), index });
      this.turn.lastUserIndex = index;
      // An option picked from those offered chose how; words typed instead of one may ask for work.
      if (answer.chosen !== true && readRequest(answer.answer) === "yes") this.user(answer.answer, index);
    }
  }

  bash(message: Extract<ContextMessage, { role: "bashExecution" }>, index: number): void {
    if (message.excludeFromContext === true) return;
    this.log.command(message, index);
    if (message.cancelled) this.notes.push({ text: `User cancelled \`${clip(message.command, 120)}\``, index });
  }

  custom(customType: string, text: string, index: number): void {
    // What the agent's harness injected (reminders, command echoes) is not a note about the work;
    // the output of a command the user ran through it is that command's outcome.
    if (isInjectedText(customType)) {
      this.log.userCommand(text, index);
      return;
    }
    if (isSummaryText(text)) this.summary(unwrapSummary(text), index);
    else if (text.trim().length > 0) {
      const line = firstLine(text, 200);
      if (junkKind(line) === undefined) this.notes.push({ text: `${customType}: ${line}`, index });
    }
  }

  /** The split turn after the range resolves its failures (and says nothing else about it). */
  settleWith(turn: readonly ContextMessage[]): void {
    this.log.settleWith(turn, this.messageCount);
  }

  /** A summary inside the range (a branch that crossed a compaction): its blockers stand from here until resolved. */
  summary(summary: string, index: number): void {
    this.embeddedSummaries.push(summary);
    this.log.carry(parseSummaryParts(summary).blocked, index);
  }

  facts(): Facts {
    const { turn, names } = this;
    const question = turn.question();
    return {
      messageCount: this.messageCount,
      requests: this.requests,
      userTurns: this.userTurns,
      lastActionIndex: this.lastActionIndex,
      constraints: this.constraints,
      decisions: this.decisions.standing(),
      statements: this.statements,
      plans: turn.lastPlans,
      ...(question ? { question } : {}),
      actions: this.log.actions,
      errors: this.log.errors,
      standingErrors: this.log.failures.standing(),
      answers: this.answers,
      completions: [...this.completions, ...this.log.completingCommands].sort((a, b) => a.index - b.index),
      fileChanges: this.log.fileChanges,
      succeededKeys: this.log.succeededKeys,
      answered: turn.answered,
      paths: names.paths,
      codeSpans: names.codeSpans,
      identifiers: names.identifiers,
      urls: names.urls,
      notes: this.notes,
      embeddedSummaries: this.embeddedSummaries,
      ...(!turn.answered && turn.lastRequest ? { openRequest: turn.lastRequest } : {}),
      anyTurnFinished: turn.anyTurnFinished,
      lastTurnAborted: turn.lastTurnAborted,
    };
  }
}

/**
 * What the user said to open a range (a split turn's prefix: its Original Request), in their
 * words: the first message that asks for work or may ("docker status", "how do I configure it?").
 */
export function openingWords(facts: Facts): Noted | undefined {
  return facts.userTurns.find((t) => t.text.length > 0) ?? facts.requests.find((r) => r.text.length > 0);
}

/**
 * `followingTurn`: the split turn that follows (its user message first): the range's last
 * question was answered there and its plans overtaken, and what the turn fixed is fixed.
 * `carriedBlockers`: a previous summary's blockers, which stand until the messages show them
 * resolved (their failures are tracked from before the first).
 */
export function collectFacts(
  messages: readonly ContextMessage[],
  options: { followingTurn?: readonly ContextMessage[]; carriedBlockers?: readonly string[] } = {},
): Facts {
  const collector = new FactCollector(messages.length, options.carriedBlockers);
  readMessages(messages, collector);
  if (!options.followingTurn) return collector.facts();
  collector.settleWith(options.followingTurn);
  const { question, ...rest } = collector.facts();
  const reply = openingReply(options.followingTurn);
  const answered = question && reply !== undefined ? { questionAnswered: { question: question.text, reply } } : {};
  return { ...rest, plans: [], followedByTurn: true, ...answered };
}

/** A turn that opens with a short reply of the user's ("yes", "go ahead"), not a request of its own. */
function openingReply(turn: readonly ContextMessage[]): string | undefined {
  const first = turn.find((message) => message.role === "user");
  if (!first) return undefined;
  const text = contentText(first.content).trim();
  return text.length > 0 && text.length <= 80 && !text.startsWith("/") && readRequest(text) === "no" ? text : undefined;
}

function unwrapSummary(text: string): string {
  const start = text.indexOf("<summary>");
  const end = text.lastIndexOf("</summary>");
  return start >= 0 && end > start ? text.slice(start + "<summary>".length, end).trim() : text;
}
