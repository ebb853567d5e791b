/**
 * The file `base-context compact` was given, as a session in the user's database. A file imported
 * before keeps its session (the user may have worked on it since); the file is imported again
 * as a fresh copy with a new id, so compacting a file always compacts what the file holds.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Daemon } from "../daemon.js";
import { AppError } from "../errors.js";
import { CliError } from "./run.js";

export interface ImportedFile {
  path: string;
  sessionId: string;
  entryCount: number;
  skippedLines: number;
  /** The session the file had been imported as before, when this is a fresh copy. */
  copyOf?: string;
}

export async function importSessionFile(daemon: Daemon, path: string): Promise<ImportedFile> {
  try {
    const result = await daemon.sessions.import({ format: "pi-jsonl", path });
    return { path, sessionId: result.session.id, entryCount: result.entryCount, skippedLines: result.skippedLines?.length ?? 0 };
  } catch (error) {
    if (!(error instanceof AppError && error.code === "session_exists" && typeof error.data.sessionId === "string")) throw describe(error, path);
    const copyOf = error.data.sessionId;
    const result = await daemon.sessions.import({ format: "pi-jsonl", content: withNewSessionId(await readFile(path, "utf8"), path) });
    return { path, sessionId: result.session.id, entryCount: result.entryCount, skippedLines: result.skippedLines?.length ?? 0, copyOf };
  }
}

/** The file's text with a new id in its header line (the first line). */
function withNewSessionId(content: string, path: string): string {
  const end = content.indexOf("\n");
  const firstLine = end < 0 ? content : content.slice(0, end);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(firstLine) as Record<string, unknown>;
  } catch {
    throw new CliError(`${path} does not start with a pi session header line`);
  }
  return JSON.stringify({ ...header, id: randomUUID() }) + (end < 0 ? "" : content.slice(end));
}

function describe(error: unknown, path: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new CliError(`no such file: ${path}`, ["Give a pi session file (.jsonl) or a session id: base-context sessions lists them."]);
  if (code === "EISDIR") return new CliError(`${path} is a folder, not a session file`);
  return error;
}
