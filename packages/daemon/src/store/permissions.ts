/**
 * The store holds every conversation, so only its owner may read it: the home folder is 0700,
 * the database and its -wal/-shm files 0600. New files are created with a umask of 077 (SQLite
 * gives the -wal and -shm files the database file's mode when it creates them); files and the
 * home folder found with wider permissions (made by an older version, or by hand) are tightened
 * with a line on stderr saying so.
 */
import { refusePseudoFileSystem } from "../pseudo-filesystem.js";
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { log } from "../log.js";

const OWNER_ONLY_FOLDER = 0o700;
const OWNER_ONLY_FILE = 0o600;

/**
 * Tightens an existing home folder of this user's that others can read or enter. A missing one
 * is left to be created (0700) by the first thing that needs it: the database, usually.
 */
export function secureHomeFolder(path: string): void {
  tighten(path, OWNER_ONLY_FOLDER, "folder");
}

/**
 * Creates a database's folder 0700 when it is missing (the home, by default); an existing folder
 * is left as it is (a database may be put in a shared folder on purpose).
 */
export function createDatabaseFolder(path: string): void {
  // Node's recursive mkdir never returns for some of those (/proc/nope/x): refused before it tries.
  refusePseudoFileSystem(path);
  const created = mkdirSync(path, { recursive: true, mode: OWNER_ONLY_FOLDER });
  // mode is subject to the umask, which can only take bits away; chmod makes it exact.
  if (created !== undefined) chmodSync(path, OWNER_ONLY_FOLDER);
}

/** Runs `open` (which may create the database file) with umask 077, where the process allows it. */
export function withPrivateUmask<T>(open: () => T): T {
  let previous: number | undefined;
  try {
    previous = process.umask(0o077);
  } catch {
    // Worker threads cannot change the umask: the chmod in secureDatabaseFiles still applies.
  }
  try {
    return open();
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}

/** The database file and its -wal and -shm files: 0600. */
export function secureDatabaseFiles(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) tighten(file, OWNER_ONLY_FILE, "file");
}

function tighten(path: string, mode: number, kind: "file" | "folder"): void {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return; // not there (yet): nothing to tighten
  }
  if ((stat.mode & 0o777) === mode || (stat.mode & 0o077) === 0) return;
  // Only this user's own files: never another user's folder (a shared /tmp, say).
  if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
    log("warn", `${path} can be read by other users (mode ${octal(stat.mode)}) and belongs to another user: not changed`);
    return;
  }
  try {
    chmodSync(path, mode);
    log("warn", `${kind} ${path} could be read by other users (mode ${octal(stat.mode)}): tightened to ${octal(mode)}`);
  } catch (error) {
    log("warn", `${path} can be read by other users (mode ${octal(stat.mode)}) and could not be tightened: ${(error as Error).message}`);
  }
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;
