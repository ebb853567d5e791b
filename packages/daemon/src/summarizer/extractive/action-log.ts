/**
 * What was done — tool calls and the user's own commands, counted per action — and what failed
 * (real failures only, by their first line); a failure is resolved when the same action later
 * succeeds. Part of the extractive summarizer's facts (facts.ts).
 */
import type { ContextMessage } from "@base-context/protocol";
import {
  ANY_LATER_SUCCESS,
  bashFailed,
  classifyToolCall,
  commandFailureKeys,
  commandKeys,
  contentText,
  errorLine,
  reportedExitCode,
  saysFixed,
  toolResultFailed,
  clip,
  type ActionKind,
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
  /** Successes of any of these keys fix it (the same command however wrapped, a copy to the same place). */
  readonly fixedBy: readonly string[];
  /** A command's failure: "the build passes now" fixes it. */
  readonly fromCommand: boolean;
}

/** The key of the model's own calls: a model error is resolved by a later finished answer. */
const MODEL_KEY = "model";

export class ActionLog {
  readonly actions = new Map<string, Action>();
  readonly errors: ErrorFact[] = [];
  /** Tool call id → the key of its action, for the result that answers the call. */
  private readonly callActions = new Map<string, string>();
  /** Action key → the keys a success of it counts for (docs/retention.md "Errors"). */
  private readonly successKeys = new Map<string, string[]>();

  /** Counts a tool call; returns what it does (its kind and target). */
  toolCall(id: string, name: string, args: Readonly<Record<string, unknown>>, index: number): ToolAction {
    const action = classifyToolCall(name, args);
    // A command is the same action whoever ran it (a tool or the user's `!cmd`).
    const key = action.kind === "run" ? runKey(action.target) : `${action.kind}:${action.toolName}:${action.target}`;
    this.callActions.set(id, key);
    this.successKeys.set(key, actionKeys(action.kind, action.target));
    this.count(key, { ...action, count: 0, lastIndex: index, outcome: "unknown" }, index);
    return action;
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
    this.outcome(key ?? `other:${message.toolName}:`, !failed, index, error);
  }

  /** A command the user ran (`!cmd`) and kept in the context; a cancelled one has no outcome. */
  command(message: Extract<ContextMessage, { role: "bashExecution" }>, index: number): void {
    const target = clip(message.command, 160);
    const key = runKey(target);
    this.successKeys.set(key, actionKeys("run", target));
    const action = this.count(key, { kind: "run", target, toolName: "!", count: 0, lastIndex: index, outcome: "unknown" }, index);
    if (typeof message.exitCode === "number") action.exitCode = message.exitCode;
    if (message.cancelled) return;
    const failed = bashFailed(message);
    const what = `\`${clip(message.command, 120)}\` (exit ${message.exitCode})`;
    const error = failed ? { what, message: errorLine(message.output) } : undefined;
    this.outcome(key, !failed, index, error);
  }

  modelFailed(errorMessage: string, index: number): void {
    this.errors.push({
      what: "model call",
      message: errorLine(errorMessage),
      index,
      resolved: false,
      actionKey: MODEL_KEY,
      fixedBy: [MODEL_KEY],
      fromCommand: false,
    });
  }

  /** A finished answer: the model calls that failed before are resolved. */
  modelAnswered(index: number): void {
    this.outcome(MODEL_KEY, true, index);
  }

  private count(key: string, fresh: Action, index: number): Action {
    const action = this.actions.get(key) ?? fresh;
    action.count++;
    action.lastIndex = index;
    this.actions.set(key, action);
    return action;
  }

  /** An assistant sentence saying an error was fixed ("the build passes now", "fixed the TS2339 in a.ts"). */
  saidFixed(sentence: string, index: number): void {
    for (const earlier of this.errors) {
      if (!earlier.resolved && saysFixed(sentence, { message: earlier.message, fromCommand: earlier.fromCommand })) {
        earlier.resolved = true;
        earlier.resolvedIndex = index;
      }
    }
  }

  private outcome(key: string, ok: boolean, index: number, error?: Pick<ErrorFact, "what" | "message">): void {
    const action = this.actions.get(key);
    if (action) action.outcome = ok ? "ok" : "error";
    const keys = this.successKeys.get(key) ?? [key];
    if (ok) {
      const all = [...keys, ANY_LATER_SUCCESS];
      for (const earlier of this.errors) {
        if (!earlier.resolved && earlier.fixedBy.some((k) => all.includes(k))) {
          earlier.resolved = true;
          earlier.resolvedIndex = index;
        }
      }
    } else if (error) {
      // A failed change is fixed by a later change of the file; a failed read by finding the file.
      const fixedBy =
        action?.kind === "run" ? commandFailureKeys(action.target) : key === MODEL_KEY || action?.kind === "read" ? keys : keys.slice(0, 1);
      this.errors.push({ ...error, index, resolved: false, actionKey: key, fixedBy, fromCommand: action?.kind === "run" });
    }
  }
}

function runKey(command: string): string {
  return `run:${clip(command, 160)}`;
}

/** The keys a success of an action counts for; the first is the one its failure is known by (as the probes key them). */
function actionKeys(kind: ActionKind, target: string): string[] {
  if (kind === "run") return commandKeys(target);
  const name = `lookup:${target.replace(/^.*[\\/]/, "")}`;
  if (kind === "read") return [name, ANY_LATER_SUCCESS];
  if (kind === "modify") return [`file:${target}`, name];
  return [`${kind}:${target}`];
}

function describeAction(action: Pick<Action, "kind" | "target" | "toolName">): string {
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
