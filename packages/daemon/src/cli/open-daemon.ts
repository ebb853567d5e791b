/**
 * The in-process daemon a CLI command works with: the same parts `serve` uses, on the same
 * database (SQLite lets a running daemon and a command share it), without settings watchers,
 * and disposed when the command ends so the process exits at once.
 *
 * The database is opened once on its own first: when it cannot be opened, the user gets a
 * message naming the file and what to do, instead of a bare SQLite error.
 */
import { dirname } from "node:path";
import type { Daemon } from "../daemon.js";
import { defaultDatabasePath } from "../paths.js";
// schema.ts alone (SQL text, no driver): `--help` still loads no database module.
import { DatabaseTooNewError } from "../sessions/database.js";
import type { CliIo } from "./output.js";
import { CliError } from "./run.js";

export async function withDaemon<T>(io: CliIo, work: (daemon: Daemon) => Promise<T>): Promise<T> {
  const databasePath = defaultDatabasePath(io.env);
  await checkDatabaseOpens(databasePath);
  // Loaded here, not at the top: `--help` and argument errors should not wait for the whole daemon to load.
  const { Daemon } = await import("../daemon.js");
  const daemon = new Daemon({ env: io.env, databasePath, watchSettings: false });
  try {
    return await work(daemon);
  } finally {
    await daemon.dispose();
  }
}

/** Opens (creating and migrating if needed) and closes the database; a CliError saying what to do if that fails. */
export async function checkDatabaseOpens(databasePath: string): Promise<void> {
  const { openDatabase } = await import("../sessions/database.js");
  try {
    openDatabase(databasePath).close();
  } catch (error) {
    throw databaseFailure(databasePath, error);
  }
}

/** What went wrong with the database file, and what to try. */
export function databaseFailure(databasePath: string, error: unknown): CliError {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const folder = dirname(databasePath);
  const elsewhere = "Or keep it and use another folder: set BASE_CONTEXT_HOME (or BASE_CONTEXT_DB for the database file alone).";
  const moveAway = `Move it away to start with an empty database: mv "${databasePath}" "${databasePath}.broken"`;

  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT" || (typeof code === "string" && code.startsWith("SQLITE_CORRUPT"))) {
    return new CliError(`the session database ${databasePath} is damaged or is not a Base Context database (${message})`, [
      moveAway,
      elsewhere,
      "Then check the setup with: base-context doctor",
    ]);
  }
  if (error instanceof DatabaseTooNewError) {
    return new CliError(`the session database ${databasePath} was written by a newer base-context: ${message}`, [
      "Update base-context, or use another database: set BASE_CONTEXT_HOME or BASE_CONTEXT_DB.",
    ]);
  }
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return new CliError(`the session database ${databasePath} is locked by another process (${message})`, [
      "Try again in a moment; if it stays locked, look for a stuck base-context process.",
    ]);
  }
  if (
    code === "SQLITE_CANTOPEN" ||
    code === "SQLITE_READONLY" ||
    code === "SQLITE_PERM" ||
    code === "SQLITE_IOERR" ||
    code === "EACCES" ||
    code === "EPERM" ||
    code === "ENOTDIR" ||
    code === "EROFS"
  ) {
    return new CliError(`cannot open the session database ${databasePath} (${message})`, [
      `Check that ${databasePath} and its folder ${folder} exist as a file and a folder you can read and write: ls -la "${folder}"`,
      elsewhere,
    ]);
  }
  return new CliError(`cannot use the session database ${databasePath}: ${message}`, [moveAway, elsewhere]);
}
