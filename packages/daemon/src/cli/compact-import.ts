/**
 * The file `base-context compact` was given, as a session in the user's database. A file maps to
 * one session, as for `import`: a file imported before is brought up to date (what is new in it is
 * added), and its session (with whatever the user did on it since) is the one compacted.
 * `import --new-id` makes a fresh copy.
 */
import type { Daemon } from "../daemon.js";
import { AppError } from "../errors.js";
import { checkSessionFile } from "./messages.js";

export interface ImportedFile {
  path: string;
  sessionId: string;
  entryCount: number;
  skippedLines: number;
  /** True when the file was imported before: nothing was imported now, its session is compacted. */
  importedBefore?: boolean;
}

export async function importSessionFile(daemon: Daemon, path: string): Promise<ImportedFile> {
  checkSessionFile(path);
  try {
    const result = await daemon.sessions.import({ path });
    const imported = { path, sessionId: result.session.id, entryCount: result.entryCount, skippedLines: result.skippedLines?.length ?? 0 };
    // Imported before: brought up to date (what is new in the file added), and that session is compacted.
    return result.updated === true ? { ...imported, importedBefore: true } : imported;
  } catch (error) {
    // A pi file of version 1 (its ids are made at each import) imported before: its session as it is.
    if (!(error instanceof AppError && error.code === "session_exists" && typeof error.data.sessionId === "string")) throw error;
    const sessionId = error.data.sessionId;
    const { entryCount } = await daemon.sessions.get({ sessionId });
    return { path, sessionId, entryCount, skippedLines: 0, importedBefore: true };
  }
}
