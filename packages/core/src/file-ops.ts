/**
 * Cumulative file tracking (docs/design.md#file-tracking): which files the
 * agent read and which it changed, taken from `read` / `write` / `edit` tool calls and carried
 * over from earlier daemon-made summaries.
 */
import type { ContextMessage, FileOps } from "@base-context/protocol";

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
 * tools (Grep, Glob) name folders and patterns, not files read, and are not tracked.
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
    const tool = Object.hasOwn(FILE_TOOLS, block.name) ? FILE_TOOLS[block.name] : undefined;
    const path = tool === undefined ? undefined : block.arguments[tool.argument];
    if (tool === undefined || typeof path !== "string" || path.length === 0) continue;
    fileOps[tool.operation].add(path);
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
