/**
 * Two small, real tools the model can call: `read` (a text file) and `ls` (a folder), both
 * confined to one workspace folder. They carry pi's names and its `path` argument, so the
 * daemon's cumulative file tracking lists the files read in each compaction summary.
 *
 * A tool throws to report a failure: the loop stores the message as a tool result with
 * `isError: true`, and the model sees it and can try something else.
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";

export interface Tool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments, sent to the model as the function's `parameters`. */
  readonly parameters: Record<string, unknown>;
  /** The tool's output as text for the model; throws to report a failure. */
  run(args: Record<string, unknown>, signal?: AbortSignal): Promise<string>;
}

/** Longest output a tool returns; the rest is cut with a note, so one file cannot fill the window. */
export const MAX_TOOL_OUTPUT_CHARS = 12_000;
const MAX_LISTED_ENTRIES = 500;

export function workspaceTools(workspace: string): Tool[] {
  const root = resolve(workspace);
  return [
    {
      name: "read",
      description: "Read a UTF-8 text file of the workspace. Paths are relative to the workspace root.",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: "File path, relative to the workspace root" } },
        required: ["path"],
        additionalProperties: false,
      },
      async run(args, signal) {
        const path = await insideWorkspace(root, stringArg(args, "path"));
        if (!(await stat(path)).isFile()) throw new Error(`${stringArg(args, "path")} is not a file`);
        return truncate(await readFile(path, { encoding: "utf8", signal }));
      },
    },
    {
      name: "ls",
      description: "List a folder of the workspace (folders end with /). Defaults to the workspace root.",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: "Folder path, relative to the workspace root (default: the root)" } },
        additionalProperties: false,
      },
      async run(args) {
        const given = args["path"] === undefined ? "." : stringArg(args, "path");
        const dir = await insideWorkspace(root, given);
        const entries = await readdir(dir, { withFileTypes: true });
        const names = entries.map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name)).sort();
        if (names.length === 0) return "(empty folder)";
        const shown = names.slice(0, MAX_LISTED_ENTRIES).join("\n");
        return names.length > MAX_LISTED_ENTRIES ? `${shown}\n[... ${names.length - MAX_LISTED_ENTRIES} more entries]` : shown;
      },
    },
  ];
}

function stringArg(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== "string" || value.length === 0) throw new Error(`argument "${name}" must be a non-empty string`);
  return value;
}

/** The real path of `given` when it lies inside the workspace (symbolic links followed); throws otherwise. */
async function insideWorkspace(root: string, given: string): Promise<string> {
  const realRoot = await realpath(root);
  let target: string;
  try {
    target = await realpath(resolve(realRoot, given));
  } catch {
    throw new Error(`${given}: no such file or folder in the workspace`);
  }
  const rel = relative(realRoot, target);
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new Error(`${given} is outside the workspace`);
  return target;
}

function truncate(text: string): string {
  if (text.length <= MAX_TOOL_OUTPUT_CHARS) return text;
  return `${text.slice(0, MAX_TOOL_OUTPUT_CHARS)}\n\n[... ${text.length - MAX_TOOL_OUTPUT_CHARS} more characters cut]`;
}
