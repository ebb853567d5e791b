/**
 * The in-process daemon a CLI command works with: the same parts `serve` uses, on the same
 * database (SQLite lets a running daemon and a command share it), without settings watchers,
 * and disposed when the command ends so the process exits at once.
 *
 * The database is opened once, by the daemon: when it cannot be opened, the user gets a message
 * naming the file and what to do (databaseFailure), instead of a bare SQLite error.
 */
import { dirname } from "node:path";
import type { Daemon } from "../daemon.js";
// schema.ts alone (SQL text, no driver): `--help` still loads no database module.
import { DatabaseTooNewError } from "../sessions/database-file.js";
import { sqliteAddonError, STORE_URL_ENV, storeLocation, StoreOpenError, StoreUrlError, type StoreLocation } from "../sessions/store-display.js";
import { PseudoFileSystemError } from "../pseudo-filesystem.js";
import type { CliIo } from "./output.js";
import { CliError } from "./run.js";

export async function withDaemon<T>(io: CliIo, work: (daemon: Daemon) => Promise<T>): Promise<T> {
  const { SettingsManager } = await import("../settings/index.js");
  const settings = new SettingsManager({ env: io.env, watch: false });
  let location: StoreLocation;
  try {
    location = storeLocation({ env: io.env, settingsUrl: settings.get().settings.store.url });
  } catch (error) {
    settings.dispose();
    throw storeFailure(error);
  }
  // Loaded here, not at the top: `--help` and argument errors should not wait for the whole daemon to load.
  const { Daemon } = await import("../daemon.js");
  let daemon: Daemon;
  try {
    const databasePath = location.engine === "sqlite" ? { databasePath: location.path } : {};
    daemon = new Daemon({ env: io.env, watchSettings: false, settings, ...databasePath });
  } catch (error) {
    settings.dispose();
    throw location.engine === "sqlite" ? databaseFailure(location.path, error) : storeFailure(error);
  }
  try {
    return await work(daemon);
  } finally {
    await daemon.dispose();
  }
}

/** A PostgreSQL store that cannot be used: where (the URL without its password) and what to try. */
export function storeFailure(error: unknown): CliError {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof StoreUrlError) {
    return new CliError(message, [
      `Fix ${STORE_URL_ENV} or store.url in your settings (base-context settings shows them): postgres://user@host:port/database`,
    ]);
  }
  const shown = error instanceof StoreOpenError ? error.location.display : undefined;
  return new CliError(message, [
    `Check that the PostgreSQL server${shown ? ` of ${shown}` : ""} runs and accepts this user (password in PGPASSWORD or ~/.pgpass).`,
    "Check the connection and the schema with: base-context doctor",
    `Or unset ${STORE_URL_ENV} and store.url to use the SQLite file.`,
  ]);
}

/** What went wrong with the database file, and what to try. */
export function databaseFailure(databasePath: string, error: unknown): CliError {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const folder = dirname(databasePath);
  const elsewhere = "Or keep it and use another folder: set BASE_CONTEXT_HOME (or BASE_CONTEXT_DB for the database file alone).";
  const moveAway = `Move it away to start with an empty database: mv "${databasePath}" "${databasePath}.broken"`;

  if (error instanceof PseudoFileSystemError) {
    return new CliError(error.message, ["Set BASE_CONTEXT_HOME (or BASE_CONTEXT_DB for the database file alone) to a folder of yours."]);
  }
  // Before anything that reads the error as the file's: the file is fine, and moving it away would not help.
  const addon = sqliteAddonError(error);
  if (addon) return new CliError(`cannot open the session database ${databasePath}: ${addon.message}`, [...addon.fixes]);

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
