/**
 * Cumulative file tracking (docs/design.md#file-tracking): which files the
 * agent read and which it changed, taken from `read` / `write` / `edit` tool calls, shell commands
 * and Codex's patches (shell-file-ops.ts: what they read, wrote, moved and removed), and carried
 * over from earlier summaries.
 */
import type { ContextMessage, FileOps } from "@base-context/protocol";
import { parseSummaryParts } from "./retention/summary-parts.js";
import { shellCallFileOps, type CallFileOps } from "./shell-file-ops.js";

/** Files seen so far, by operation. Sets keep the first-seen order and drop duplicates. */
export interface FileOperations {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

export function createFileOps(): FileOperations {
  return { read: new Set(), written: new Set(), edited: new Set() };
}

/**
 * The file tools of the agents whose sessions are read here, with the argument naming the file:
 * pi's built-ins (`path`), and Claude Code's (`file_path`; `notebook_path` for notebooks). Search
 * tools (Grep, Glob) name folders and patterns, not files read, and are not tracked. Codex's shell
 * and patch tools are read by shell-file-ops.ts.
 */
const FILE_TOOLS: Readonly<Record<string, { operation: keyof FileOperations; argument: string }>> = {
  read: { operation: "read", argument: "path" },
  write: { operation: "written", argument: "path" },
  edit: { operation: "edited", argument: "path" },
  Read: { operation: "read", argument: "file_path" },
  Write: { operation: "written", argument: "file_path" },
  Edit: { operation: "edited", argument: "file_path" },
  MultiEdit: { operation: "edited", argument: "file_path" },
  NotebookRead: { operation: "read", argument: "notebook_path" },
  NotebookEdit: { operation: "edited", argument: "notebook_path" },
};

/** Record the file operations of an assistant message's tool calls (other messages carry none). */
export function extractFileOpsFromMessage(message: ContextMessage, fileOps: FileOperations): void {
  if (message.role !== "assistant") return;
  for (const block of message.content) {
    if (block.type !== "toolCall") continue;
    const shellOps = shellCallFileOps(block.name, block.arguments);
    if (shellOps !== undefined) {
      addCallFileOps(shellOps, fileOps);
      continue;
    }
    const tool = Object.hasOwn(FILE_TOOLS, block.name) ? FILE_TOOLS[block.name] : undefined;
    const path = tool === undefined ? undefined : block.arguments[tool.argument];
    if (tool === undefined || typeof path !== "string" || path.length === 0) continue;
    fileOps[tool.operation].add(path);
  }
}

/**
 * Adds one call's operations in the order a shell runs them: reads and writes, then moves (the
 * old path leaves every list, the new one is written) and removals (the path leaves every list:
 * the summary says what was removed, the lists hold the files as they are).
 */
export function addCallFileOps(ops: CallFileOps, fileOps: FileOperations): void {
  for (const file of ops.read) fileOps.read.add(file);
  for (const file of ops.written) fileOps.written.add(file);
  for (const file of ops.edited) fileOps.edited.add(file);
  for (const { from, to } of ops.moved ?? []) {
    forget(fileOps, from);
    fileOps.written.add(to);
  }
  for (const file of ops.removed ?? []) forget(fileOps, file);
}

function forget(fileOps: FileOperations, path: string): void {
  for (const set of [fileOps.read, fileOps.written, fileOps.edited]) {
    set.delete(path);
    // `rm -r dir`: what the lists hold under it goes too.
    for (const file of set) if (file.startsWith(`${path.replace(/\/+$/, "")}/`)) set.delete(file);
  }
}

/**
 * Carry over the file lists of an earlier summary's `details` (`{ readFiles, modifiedFiles }`).
 * Anything else in `details` (a plugin's own data) is ignored; callers skip plugin-made summaries.
 */
export function addFileOpsFromDetails(details: unknown, fileOps: FileOperations): void {
  if (typeof details !== "object" || details === null) return;
  const { readFiles, modifiedFiles } = details as { readFiles?: unknown; modifiedFiles?: unknown };
  for (const file of stringsOf(readFiles)) fileOps.read.add(file);
  // Written and edited collapse into "modified" in details; either set restores that meaning.
  for (const file of stringsOf(modifiedFiles)) fileOps.edited.add(file);
}

/**
 * Carry over the files a previous summary lists, whoever wrote it: its `details` lists when it
 * has them (a summary made here), else the lists or files section of its text (another agent's
 * summary: Claude Code's "Files and Code Sections", pi's `<modified-files>`).
 */
export function addFileOpsFromPrevious(previous: { readonly details?: unknown; readonly summary: string }, fileOps: FileOperations): void {
  if (hasFileLists(previous.details)) {
    addFileOpsFromDetails(previous.details, fileOps);
    return;
  }
  for (const { path, modified } of parseSummaryParts(previous.summary).files) (modified ? fileOps.edited : fileOps.read).add(path);
}

function hasFileLists(details: unknown): boolean {
  if (typeof details !== "object" || details === null) return false;
  const { readFiles, modifiedFiles } = details as { readFiles?: unknown; modifiedFiles?: unknown };
  return Array.isArray(readFiles) || Array.isArray(modifiedFiles);
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/**
 * Final, sorted lists: a file that was changed is listed as modified only, even if it was also
 * read, so the model does not mistake it for unchanged.
 */
export function computeFileLists(fileOps: FileOperations): FileOps {
  const modified = new Set([...fileOps.edited, ...fileOps.written]);
  return {
    readFiles: [...fileOps.read].filter((file) => !modified.has(file)).sort(),
    modifiedFiles: [...modified].sort(),
  };
}

/**
 * The file sections appended to a summary: `\n\n<read-files>\n…\n</read-files>` and/or
 * `<modified-files>`, separated by a blank line; empty lists are omitted ("" when both are).
 */
export function formatFileOps(fileOps: FileOps): string {
  const sections: string[] = [];
  if (fileOps.readFiles.length > 0) sections.push(`<read-files>\n${fileOps.readFiles.join("\n")}\n</read-files>`);
  if (fileOps.modifiedFiles.length > 0) {
    sections.push(`<modified-files>\n${fileOps.modifiedFiles.join("\n")}\n</modified-files>`);
  }
  return sections.length > 0 ? `\n\n${sections.join("\n\n")}` : "";
}
