/**
 * The file `base-context compact` was given, as a session in the user's database. A file imported
 * before keeps its session (the user may have worked on it since); the file is imported again
 * as a fresh copy with a new id, so compacting a file always compacts what the file holds.
 */
import type { Daemon } from "../daemon.js";
import { AppError } from "../errors.js";
import { checkSessionFile } from "./messages.js";

export interface ImportedFile {
  path: string;
  sessionId: string;
  entryCount: number;
  skippedLines: number;
  /** The session the file had been imported as before, when this is a fresh copy. */
  copyOf?: string;
}

export async function importSessionFile(daemon: Daemon, path: string): Promise<ImportedFile> {
  checkSessionFile(path);
  try {
    const result = await daemon.sessions.import({ path });
    return { path, sessionId: result.session.id, entryCount: result.entryCount, skippedLines: result.skippedLines?.length ?? 0 };
  } catch (error) {
    if (!(error instanceof AppError && error.code === "session_exists" && typeof error.data.sessionId === "string")) throw error;
    const copyOf = error.data.sessionId;
    const result = await daemon.sessions.import({ path, newId: true });
    return { path, sessionId: result.session.id, entryCount: result.entryCount, skippedLines: result.skippedLines?.length ?? 0, copyOf };
  }
}
