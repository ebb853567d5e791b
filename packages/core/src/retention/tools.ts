/**
 * What a tool call did, read from its name and arguments. Agents name their tools differently
 * (`read`, `read_file`, `Read`, `str_replace_editor`, `bash`, `run_terminal_cmd`…), so the
 * classification goes by patterns, and by the argument shapes when the name says nothing.
 */
import { clip, firstLine } from "./text.js";

export type ActionKind = "read" | "modify" | "run" | "search" | "other";

export interface ToolAction {
  readonly kind: ActionKind;
  /** The file, command, pattern or URL the call was about; empty when none could be found. */
  readonly target: string;
  readonly toolName: string;
}

const RUN_NAME =
  /^(?:bash|shell|sh|zsh|exec|execute|run|terminal|command|cmd|powershell|ipython|python|repl)|(?:_|^)(?:run|exec|terminal|shell|command)(?:_|$)/i;
const MODIFY_NAME = /write|edit|create|patch|replace|apply|insert|append|delete|remove|rename|move|multi_?edit|save/i;
const READ_NAME = /^(?:read|view|cat|open|get_?file|load)|(?:_|^)(?:read|view)(?:_|$)|read_?file|view_?file/i;
const SEARCH_NAME = /grep|glob|find|search|^ls$|list|^rg$|ripgrep|lookup/i;

const PATH_KEYS = ["path", "file_path", "filePath", "file", "filename", "target_file", "notebook_path", "target"] as const;
const COMMAND_KEYS = ["command", "cmd", "script"] as const;
const SEARCH_KEYS = ["pattern", "query", "glob", "regex", "url"] as const;

export function classifyToolCall(name: string, args: Readonly<Record<string, unknown>>): ToolAction {
  const command = firstString(args, COMMAND_KEYS);
  const path = firstString(args, PATH_KEYS) ?? firstOfArray(args.paths);
  const code = typeof args.code === "string" ? args.code : undefined;

  // Editor tools with sub-commands (`str_replace_based_edit_tool {command: "view", path}`).
  if (path !== undefined && command !== undefined && /^(?:view|read|cat|open)$/i.test(command)) {
    return { kind: "read", target: path, toolName: name };
  }
  if (command !== undefined && (RUN_NAME.test(name) || path === undefined)) {
    return { kind: "run", target: clip(command, 160), toolName: name };
  }
  if (code !== undefined && RUN_NAME.test(name)) {
    return { kind: "run", target: `${name}: ${firstLine(code, 140)}`, toolName: name };
  }
  if (path !== undefined) {
    if (MODIFY_NAME.test(name) || isEditArgs(args)) return { kind: "modify", target: path, toolName: name };
    if (READ_NAME.test(name)) return { kind: "read", target: path, toolName: name };
    if (SEARCH_NAME.test(name)) return { kind: "search", target: searchTarget(args) ?? path, toolName: name };
    return { kind: "other", target: path, toolName: name };
  }
  if (SEARCH_NAME.test(name)) return { kind: "search", target: searchTarget(args) ?? "", toolName: name };
  return { kind: "other", target: argumentSummary(args), toolName: name };
}

/** Arguments that only make sense for a change: old/new text, full content, edits. */
function isEditArgs(args: Readonly<Record<string, unknown>>): boolean {
  return "old_string" in args || "oldText" in args || "new_string" in args || "newText" in args || "edits" in args || "content" in args;
}

function searchTarget(args: Readonly<Record<string, unknown>>): string | undefined {
  const value = firstString(args, SEARCH_KEYS);
  return value === undefined ? undefined : clip(value, 120);
}

function firstString(args: Readonly<Record<string, unknown>>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = args[key];
    if (typeof value === "string" && value.trim().length > 0) return value.trim();
  }
  return undefined;
}

function firstOfArray(value: unknown): string | undefined {
  return Array.isArray(value) && typeof value[0] === "string" ? value[0] : undefined;
}

/** `k=v, k2=v2` with short values, for tools we know nothing about. */
function argumentSummary(args: Readonly<Record<string, unknown>>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    if (parts.length === 3) break;
    const shown = typeof value === "string" ? value : JSON.stringify(value);
    if (shown !== undefined) parts.push(`${key}=${clip(shown, 60)}`);
  }
  return parts.join(", ");
}

const EXIT_CODE_RE = /(?:exit(?:ed)?(?: with)? code|exit status|exitcode)[:\s]+(-?\d+)/i;

/** The exit code a command result reports in its text, if any (looked for near the end). */
export function reportedExitCode(text: string): number | undefined {
  const tail = text.length > 600 ? text.slice(-600) : text;
  const match = EXIT_CODE_RE.exec(tail);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
