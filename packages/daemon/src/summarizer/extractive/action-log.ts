/**
 * What was done — tool calls and the user's own commands, counted per action — and what failed
 * (real failures only, by their first line, tracked by core's `FailureTracker` as the retention
 * probes track them). Part of the extractive summarizer's facts (facts.ts).
 */
import type { ContextMessage } from "@base-context/protocol";
import {
  actionFailureKeys,
  failureKeys,
  ANY_LATER_SUCCESS,
  bashFailed,
  callDetails,
  classifyToolCall,
  clip,
  commandFailureKeys,
  commandKey,
  commandKeys,
  errorLine,
  FailureTracker,
  isInterruption,
  MOVED_ON,
  passwordLine,
  tidyErrorLine,
  readToolResult,
  reportedExitCode,
  contentText,
  commandFileOps,
  shellCallFileOps,
  successKeys,
  userCommandOutput,
  type CallFileOps,
  type ActionKind,
  type Failure,
  type HumanWords,
  type ReadCall,
  type ToolAction,
} from "@base-context/core";

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

/** A failure (core `FailureTracker`): what failed, e.g. "`pnpm test` (exit 1)", its first line, and whether it still stands. */
export type ErrorFact = Failure;

/** How Blocked marks a failure that stood when the user stopped its task (docs/retention.md "Fixed or standing"). */
export const STOPPED = "(task stopped by the user)";

/** The key of the model's own calls: a model error is resolved by a later finished answer. */
const MODEL_KEY = "model";

/** A file a shell command moved or removed, and where. */
export interface FileChange {
  readonly path: string;
  /** Where it went (a move); absent: removed. */
  readonly to?: string;
  readonly index: number;
}

/** A command whose success says work was finished: a commit, a merge, a closed issue or task. */
const COMPLETING = /\b(?:commit|push|merge|close|done|complete|finish|resolve|release|publish)\b/i;

export class ActionLog {
  readonly actions = new Map<string, Action>();
  readonly failures = new FailureTracker();
  /** Files moved or removed by shell commands that succeeded, in order. */
  readonly fileChanges: FileChange[] = [];
  /** Commands that succeeded and finish work (`git commit -m "…"`, `bd close x`), as run. */
  readonly completingCommands: { text: string; index: number }[] = [];
  /** The keys of every action that succeeded (core `actionKeys`): a step naming a command that ran is done. */
  readonly succeededKeys = new Set<string>();
  /** Tool call id → the key of its action, for the result that answers the call. */
  private readonly callActions = new Map<string, string>();
  /** Tool call id → what only the call says (the options it offered the user, the content it writes). */
  private readonly callExtras = new Map<string, Pick<ReadCall, "options" | "contentKey">>();
  private lastUserCommand: string | undefined;
  /** Tool call id → what a shell call does to files, for when its result says it ran. */
  private readonly callFiles = new Map<string, { ops: CallFileOps; command: string }>();

  /** The blockers an earlier summary left (before message `index`): they stand until the messages resolve them, by the same rules. */
  carry(blockers: readonly string[], index: number): void {
    for (const item of blockers) this.failures.failed({ ...carriedFailure(item), index, carried: true });
  }

  get errors(): readonly ErrorFact[] {
    return this.failures.failures;
  }

  /** Counts a tool call; returns what it does (its kind and target). */
  toolCall(id: string, name: string, args: Readonly<Record<string, unknown>>, index: number): ToolAction {
    const action = classifyToolCall(name, args);
    // A command is the same action whoever ran it (a tool or the user's `!cmd`).
    const key = action.kind === "run" ? runKey(action.target) : `${action.kind}:${action.toolName}:${action.target}`;
    this.callActions.set(id, key);
    this.callExtras.set(id, callDetails(args));
    const ops = action.kind === "run" ? shellCallFileOps(name, args) : undefined;
    if (ops) this.callFiles.set(id, { ops, command: typeof args.command === "string" ? args.command : action.target });
    this.count(key, { ...action, count: 0, lastIndex: index, outcome: "unknown" }, index);
    return action;
  }

  /** A tool's result; the human's words it carries, if any, are returned for the caller to read as the user's. */
  toolResult(message: Extract<ContextMessage, { role: "toolResult" }>, index: number): HumanWords | undefined {
    const key = this.callActions.get(message.toolCallId);
    const found = key === undefined ? undefined : this.actions.get(key);
    const action = found && { ...found, ...this.callExtras.get(message.toolCallId) };
    const reading = readToolResult(action, message);
    const exitCode = action?.kind === "run" ? reportedExitCode(contentText(message.content)) : undefined;
    // The latest run's status: a success that reports no code exited 0.
    if (found?.kind === "run") found.exitCode = exitCode ?? (message.isError === true ? 1 : 0);
    if (found) found.outcome = reading.failed ? "error" : "ok";
    if (!reading.failed) {
      const keys = action ? successKeys(action) : [`tool:${message.toolName}`];
      this.failures.succeeded(keys, index);
      for (const done of keys) this.succeededKeys.add(done);
      this.ran(message.toolCallId, index);
      return reading.human;
    }
    const described = action ? describeAction(action) : `\`${message.toolName}\``;
    const what = reading.refused ? `${described} (refused by the user)` : exitCode ? `${described} (exit ${exitCode})` : described;
    const keys = failureKeys(action, message, reading, key ?? `tool:${message.toolName}`);
    this.failures.failed({ what, message: reading.message, index, ...keys, ...(reading.refused ? { refused: true } : {}) });
    return reading.human;
  }

  /** A command the user ran (`!cmd`) and kept in the context; a cancelled one has no outcome. */
  command(message: Extract<ContextMessage, { role: "bashExecution" }>, index: number): void {
    const target = clip(message.command, 160);
    const key = runKey(target);
    const action = this.count(key, { kind: "run", target, toolName: "!", count: 0, lastIndex: index, outcome: "unknown" }, index);
    if (typeof message.exitCode === "number") action.exitCode = message.exitCode;
    if (message.cancelled) return;
    const failed = bashFailed(message);
    action.outcome = failed ? "error" : "ok";
    if (!failed) {
      this.failures.succeeded(commandKeys(target), index);
      this.callFiles.set(`!${index}`, { ops: commandFileOps(message.command), command: message.command });
      this.ran(`!${index}`, index);
      return;
    }
    const what = `\`${tidyErrorLine(clip(message.command, 120))}\` (exit ${message.exitCode})`;
    const failure = { what, message: errorLine(message.output), index, actionKey: `run:${commandKey(target)}` };
    this.failures.failed({ ...failure, fixedBy: commandFailureKeys(target), fromCommand: true });
  }

  /** The harness's report of a command the user ran through it (a slash command): it fails or works like theirs. */
  userCommand(text: string, index: number): void {
    // The user stopped the turn: what stood then stays standing.
    if (isInterruption(text)) this.failures.interrupted();
    const ran = userCommandOutput(text);
    if (ran.command !== undefined) this.lastUserCommand = ran.command;
    const command = this.lastUserCommand;
    if (command === undefined || !/<local-command-(?:stdout|stderr)>/.test(text)) return;
    const keys = commandKeys(command);
    if (ran.error === undefined) this.failures.succeeded(keys, index);
    else {
      const failure = { what: `\`${command}\` (the user's)`, message: ran.error, index, actionKey: keys[0]! };
      this.failures.failed({ ...failure, fixedBy: keys.slice(0, 1), fromCommand: true });
    }
  }

  modelFailed(errorMessage: string, index: number): void {
    const failure = { what: "model call", message: errorLine(errorMessage), index };
    this.failures.failed({ ...failure, actionKey: MODEL_KEY, fixedBy: [MODEL_KEY], fromCommand: false });
  }

  /** A call of the model's: it works again (a failed model call before it is resolved). */
  modelWorked(index: number): void {
    this.failures.succeeded([MODEL_KEY], index, false);
  }

  /** A finished answer: the model calls that failed before are resolved. */
  modelAnswered(index: number): void {
    this.failures.succeeded([MODEL_KEY, MOVED_ON], index, false);
  }

  /** An assistant sentence saying an error was fixed ("the build passes now", "fixed the TS2339 in a.ts"). */
  saidFixed(sentence: string, index: number): void {
    this.failures.said(sentence, index);
  }

  /**
   * The messages right after the range (the split turn that follows it): their successes resolve
   * the range's failures, a different failure of the same action supersedes one, a finished answer
   * resolves a failed model call. Nothing else of them is counted: the turn is summarized apart.
   */
  settleWith(messages: readonly ContextMessage[], firstIndex: number): void {
    const calls = new Map<string, ReadCall & { key: string }>();
    messages.forEach((message, offset) => {
      const index = firstIndex + offset;
      if (message.role === "assistant") {
        for (const block of message.content) {
          if (block.type !== "toolCall") continue;
          const action = classifyToolCall(block.name, block.arguments);
          const key = action.kind === "run" ? runKey(action.target) : `${action.kind}:${action.toolName}:${action.target}`;
          const { kind, target, toolName } = action;
          calls.set(block.id, { key, kind, target, toolName, ...callDetails(block.arguments) });
        }
        if (message.stopReason === "stop") this.failures.succeeded([MODEL_KEY, MOVED_ON], index, false);
        else if (message.stopReason !== "error") this.failures.succeeded([MODEL_KEY], index, false);
      } else if (message.role === "toolResult") {
        const call = calls.get(message.toolCallId);
        const reading = readToolResult(call, message);
        if (!reading.failed) {
          this.failures.succeeded(call ? successKeys(call) : [`tool:${message.toolName}`], index);
        } else if (call && !reading.refused) {
          const keys = failureKeys(call, message, reading, call.key);
          this.failures.supersede(keys.actionKey, reading.message, index, keys.fromCommand ? keys.fixedBy : []);
        }
      } else if (message.role === "bashExecution" && !message.cancelled) {
        const { command } = message;
        if (!bashFailed(message)) this.failures.succeeded(commandKeys(command), index);
        else this.failures.supersede(`run:${commandKey(command)}`, errorLine(message.output), index, commandFailureKeys(command));
      }
    });
  }

  /** A shell call that ran: the files it moved or removed, and whether it finished work. */
  private ran(callId: string, index: number): void {
    const call = this.callFiles.get(callId);
    if (!call) return;
    for (const { from, to } of call.ops.moved ?? []) this.fileChanges.push({ path: from, to, index });
    for (const path of call.ops.removed ?? []) this.fileChanges.push({ path, index });
    if (COMPLETING.test(call.command)) this.completingCommands.push({ text: call.command, index });
  }

  private count(key: string, fresh: Action, index: number): Action {
    const action = this.actions.get(key) ?? fresh;
    action.count++;
    action.lastIndex = index;
    this.actions.set(key, action);
    return action;
  }
}

function runKey(command: string): string {
  return `run:${clip(command, 160)}`;
}

/**
 * A blocker a previous summary listed, as a failure to track: "`cmd` (exit 1): `message`" (ours),
 * "Error (cmd): `message`" (repair's) is a command's failure, fixed by the same rules as one seen
 * now; "edit `path`: `message`" a change's; any other text stands until a later failure of the same
 * text supersedes it or the assistant says it is fixed.
 */
function carriedFailure(item: string): Omit<ErrorFact, "resolved" | "resolvedIndex" | "resolvedHow" | "index"> {
  const ours =
    /^`([^`]+)`(?: \((?:exit -?\d+|refused by the user|task stopped by the user)\))*: `(.+)`$/.exec(item) ?? /^Error \(([^)]*)\): `(.+)`$/.exec(item);
  const refused = /\(refused by the user\)/.test(item);
  const stopped = item.includes(STOPPED) ? { abandoned: true } : {};
  if (ours) {
    const command = ours[1]!.replace(/…$/, "");
    const fixedBy = refused ? [ANY_LATER_SUCCESS] : commandFailureKeys(command);
    const privileged = passwordLine(ours[2]!) !== undefined;
    const kind = refused ? { refused } : privileged ? { privileged, access: true } : {};
    return { what: item, message: ours[2]!, actionKey: `run:${commandKey(command)}`, fixedBy, fromCommand: true, ...kind, ...stopped };
  }
  const model = /^model call: `(.+)`$/.exec(item);
  if (model) return { what: item, message: model[1]!, actionKey: MODEL_KEY, fixedBy: [MODEL_KEY], fromCommand: false };
  const file = /^(\w+) `([^`]+)`(?: \([^)]*\))?: `(.+)`$/.exec(item);
  if (file) {
    const kind = file[1] === "read" ? "read" : "modify";
    const fixedBy = refused ? [ANY_LATER_SUCCESS] : actionFailureKeys(kind, file[2]!);
    return { what: item, message: file[3]!, actionKey: `carried:${file[1]}:${file[2]}`, fixedBy, fromCommand: false, ...(refused ? { refused } : {}) };
  }
  return { what: item, message: item, actionKey: `carried:${item.toLowerCase()}`, fixedBy: [], fromCommand: false };
}

function describeAction(action: Pick<Action, "kind" | "target" | "toolName">): string {
  // Long unbroken runs (an inline script's hash literal, a minified path) shortened as in error lines: read, not data.
  const target = action.target ? `\`${tidyErrorLine(action.target)}\`` : "";
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
