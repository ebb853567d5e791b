/**
 * Reading a tool's result (docs/retention.md "Errors"): whether it reports a failure, the line a
 * person reads as the error, and the human's words it carries. The retention probes and the
 * extractive summarizer read results through here, so both count the same failures.
 */
import type { ContextMessage, UserContentBlock } from "@base-context/protocol";
import {
  commandProgram,
  errorLine,
  exitedAsDesigned,
  foundNothing,
  hasStackTrace,
  isMalformedCommand,
  passwordLine,
  saysOnlyExitStatus,
  startsWithErrorLine,
  reportedErrorLine,
  stderrErrorLine,
  tidyErrorLine,
} from "./errors.js";
import { humanWordsInResult, offeredOptions, type HumanWords } from "./human-words.js";
import { isLookupCommand } from "./lookups.js";
import {
  ANY_LATER_SUCCESS,
  actionFailureKeys,
  actionKeys,
  commandFailureKeys,
  commandKey,
  contentKey,
  failedCommandNamed,
  pathLookupKeys,
  wasCancelled,
} from "./resolution.js";
import { reportedExitCode } from "./tools.js";

type ToolResult = Extract<ContextMessage, { role: "toolResult" }>;

export function contentText(content: string | readonly UserContentBlock[]): string {
  if (typeof content === "string") return content;
  let text = "";
  for (const block of content) if (block.type === "text") text += (text ? "\n" : "") + block.text;
  return text;
}

/**
 * A tool result that reports a failure: flagged `isError`, a non-zero exit, or a stack trace —
 * unless the command exited non-zero as designed (an empty search, `test`, `diff`, `sleep`), said
 * nothing but its exit status (a check that answered no), or a search tool only found nothing.
 * A cancelled call is no failure; a refused one is read by `readToolResult`.
 */
export function toolResultFailed(call: { readonly kind: string; readonly target: string } | undefined, message: ToolResult): boolean {
  const text = contentText(message.content);
  if (wasCancelled(text)) return false;
  // A command that could not get the user's password did not run, whatever the status (a background job, a later command's).
  if (call?.kind === "run" && passwordLine(text) !== undefined) return true;
  const trace = hasStackTrace(text);
  if (trace) return true;
  const exitCode = call?.kind === "run" ? reportedExitCode(text) : undefined;
  // A result whose own first line is an error line (`TypeError: …`), or whose error stream names
  // one, flagged or not; a file read is content.
  if (message.isError !== true && call?.kind !== "read" && (startsWithErrorLine(text) || stderrErrorLine(text) !== undefined)) return true;
  // A command that changes or runs something and reports errors while exiting 0 ("Error processing a.jsonl: …").
  if (message.isError !== true && call?.kind === "run" && !isLookupCommand(call.target) && reportedErrorLine(text) !== undefined) return true;
  if (message.isError !== true && (exitCode === undefined || exitCode === 0)) return false;
  if (call?.kind === "run") return !exitedAsDesigned(call.target, exitCode ?? 1, text) && !saysOnlyExitStatus(text);
  return !(call?.kind === "search" || call === undefined) || !foundNothing(text);
}

/** A `!command` the user ran that failed (not cancelled, not as designed, not silent). */
export function bashFailed(message: Extract<ContextMessage, { role: "bashExecution" }>): boolean {
  if (message.excludeFromContext === true || message.cancelled) return false;
  const code = typeof message.exitCode === "number" ? message.exitCode : 0;
  if (hasStackTrace(message.output)) return true;
  return code !== 0 && !exitedAsDesigned(message.command, code, message.output) && !saysOnlyExitStatus(message.output);
}

export interface ResultReading {
  /** A failure to track: an error, or the user refusing the call. */
  readonly failed: boolean;
  /** The user refused the call: it stands until the work goes on (any later success). */
  readonly refused: boolean;
  /** The line a person reads as the error (when failed). */
  readonly message: string;
  /** The human's words the result carries (answers to the agent's questions, a refusal's reason). */
  readonly human?: HumanWords;
}

/**
 * A tool call as its result is read: what it did (tools.ts `classifyToolCall`), and what only the call itself says —
 * the options it put before the user (a question tool), the content it writes (known again if
 * written elsewhere).
 */
export interface ReadCall {
  readonly kind: string;
  readonly target: string;
  readonly toolName: string;
  readonly options?: readonly string[];
  readonly contentKey?: string;
}

/** The call's details beyond its kind and target (`ReadCall`), from its arguments. */
export function callDetails(args: Readonly<Record<string, unknown>>): Pick<ReadCall, "options" | "contentKey"> {
  const options = offeredOptions(args);
  const content = contentKey(args);
  return { ...(options.length > 0 ? { options } : {}), ...(content !== undefined ? { contentKey: content } : {}) };
}

/** The keys a call that worked counts for (resolution.ts `actionKeys`, and the content it wrote). */
export function successKeys(call: ReadCall): string[] {
  const keys = actionKeys(call.kind, call.target, call.toolName);
  return call.contentKey !== undefined ? [...keys, call.contentKey] : keys;
}

/** How a tool result reads: failed or not, its error line, the human's words in it. */
export function readToolResult(
  call: { readonly kind: string; readonly target: string; readonly options?: readonly string[] } | undefined,
  message: ToolResult,
): ResultReading {
  const text = contentText(message.content);
  const human = humanWordsInResult(message.toolName, text, call?.options);
  if (human?.refused) return { failed: true, refused: true, message: refusalLine(text), human };
  const failed = toolResultFailed(call, message);
  const password = call?.kind === "run" ? passwordLine(text) : undefined;
  const reported = message.isError === true ? undefined : (stderrErrorLine(text) ?? reportedErrorLine(text));
  const line = failed ? (password ?? reported ?? errorLine(text)) : "";
  return { failed, refused: false, message: line, ...(human ? { human } : {}) };
}

/** How a failed call is tracked (failures.ts): the action it belongs to, the keys whose success fixes it, what kind of failure it is. */
export interface FailureKeys {
  readonly actionKey: string;
  readonly fixedBy: readonly string[];
  readonly fromCommand: boolean;
  readonly lookup?: boolean;
  readonly privileged?: boolean;
  readonly malformed?: boolean;
  readonly paths?: readonly string[];
  readonly access?: boolean;
  readonly changes?: string;
}

/**
 * The keys of a failed call: a refusal stands until any later success; a failure whose message
 * names another command (`Command failed: git rev-parse …`) is that command's; else the call's own
 * action's (resolution.ts `actionFailureKeys`; a command by the program it runs, so `sudo x` is
 * `x` again). A look-up that failed, a program that is not there and a command the shell could not
 * parse stand until the work goes on; a command that needed the user's password stands until it
 * runs. `actionKey` is the caller's key for the call (a command's is its program run).
 */
export function failureKeys(call: ReadCall | undefined, message: ToolResult, reading: ResultReading, actionKey: string): FailureKeys {
  const fromCommand = call?.kind === "run";
  if (reading.refused) return { actionKey, fixedBy: [ANY_LATER_SUCCESS], fromCommand };
  const named = failedCommandNamed(reading.message, fromCommand ? call!.target : undefined);
  if (named !== undefined) return { actionKey: `run:${commandKey(named)}`, fixedBy: commandFailureKeys(named), fromCommand: true };
  if (!call) return { actionKey, fixedBy: [`tool:${message.toolName}`], fromCommand: false };
  const own = fromCommand ? `run:${commandKey(call.target)}` : actionKey;
  const fixedBy = [...actionFailureKeys(call.kind, call.target, call.toolName), ...accessKeys(call, reading.message)];
  if (call.kind === "modify" && call.contentKey !== undefined) fixedBy.push(call.contentKey);
  const privileged = fromCommand && passwordLine(reading.message) !== undefined;
  const about = {
    paths: [...new Set([...(fromCommand ? pathWords(call.target) : [call.target]), ...pathWords(reading.message)])],
    ...(privileged || ACCESS.test(reading.message) ? { access: true } : {}),
    ...(call.kind === "modify" ? { changes: call.target } : {}),
  };
  if (privileged) return { actionKey: own, fixedBy, fromCommand, privileged, ...about };
  // A look-up that failed, a program that is not there, a command written wrong: like a failed read,
  // they taught the agent something and stand until the work goes on.
  if (fromCommand && isMalformedCommand(reading.message)) {
    return { actionKey: own, fixedBy: [...fixedBy, ANY_LATER_SUCCESS], fromCommand, malformed: true, ...about };
  }
  if (fromCommand && (isLookupCommand(call.target) || missingProgram(call.target, reading.message))) {
    return { actionKey: own, fixedBy: [...fixedBy, ANY_LATER_SUCCESS], fromCommand, lookup: true, ...about };
  }
  return { actionKey: own, fixedBy, fromCommand, ...about };
}

/** The words of a command or a message that name files (globs kept: `/usr/bin/tool*` covers `/usr/bin/tool`). */
function pathWords(text: string): string[] {
  const found: string[] = [];
  for (const raw of text.split(/[\s'"`(),;|&<>=]+/)) {
    const word = raw.replace(/[.:]+$/, "");
    if (word.length > 1 && !word.includes("://") && /[\\/]/.test(word) && /[\w*]/.test(word) && !/^\$/.test(word)) found.push(word);
  }
  return found;
}

/** The shell saying the program does not exist (`pkill: command not found`, PowerShell's "is not recognized as the name of a cmdlet"). */
const MISSING_PROGRAM = /\bcommand not found\b|\bis not recognized as (?:the name of a cmdlet|an internal or external command)|\bNo such file or directory\b.*\bexec\b/i;

/** The message says the command's own program is not there ("Python was not found; …" for `python3 -c …`). */
function missingProgram(command: string, message: string): boolean {
  if (MISSING_PROGRAM.test(message)) return true;
  const program = commandProgram(command).replace(/\.exe$/i, "").replace(/[\d.]+$/, "");
  if (program.length < 2) return false;
  return new RegExp(`\\b${program.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\w*\\b[^.;]{0,20}\\b(?:was not found|not found|not installed)\\b`, "i").test(message);
}

/** An error about reaching a file: the file being reached later (read, written, named by a command that works) fixes it. */
const ACCESS = /permission denied|EACCES|EPERM|operation not permitted|no such file|cannot access|does not exist|not found|no matches found/i;

/** `lookup:<name>` for each file a command names, when its failure was about reaching a file. */
function accessKeys(call: ReadCall, message: string): string[] {
  if (call.kind !== "run" || !ACCESS.test(message)) return [];
  return pathLookupKeys(call.target);
}

/**
 * The output of a command the user ran through the agent's harness (Claude Code's slash commands:
 * `<command-name>/login</command-name>`, then `<local-command-stdout>…`), read from
 * the injected text that carries it: the command, and its error line when the output names one.
 */
export function userCommandOutput(text: string): { command?: string; error?: string } {
  const command = /<command-name>\s*([^<]+?)\s*<\/command-name>/.exec(text)?.[1];
  const output = /<local-command-(?:stdout|stderr)>([\s\S]*?)(?:<\/local-command-(?:stdout|stderr)>|$)/.exec(text)?.[1];
  const named = output !== undefined && (STRONG_OR_WEAK.test(output) || startsWithErrorLine(output)) ? errorLine(output) : undefined;
  return { ...(command !== undefined ? { command } : {}), ...(named ? { error: named } : {}) };
}

const STRONG_OR_WEAK = /\b(?:error|fatal|panic|failed|failure|couldn't|could not|cannot|can't|denied|refused)\b/i;

/** A refusal's line: its first sentences up to the harness's parenthesis ("The user doesn't want to proceed … was rejected"). */
function refusalLine(text: string): string {
  const first = text.trim().split("\n", 1)[0]!;
  const paren = first.indexOf(" (");
  return tidyErrorLine(paren > 0 ? first.slice(0, paren) : first);
}
