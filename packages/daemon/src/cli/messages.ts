/**
 * The command line's words for what goes wrong, in one place so every command says the same
 * thing the same way: daemon errors (by their stable code) as messages with what to do next,
 * the checks every command makes on a session file it is given, and the rule for a session id
 * given by its start.
 */
import { openSync, readSync, closeSync, statSync } from "node:fs";
import { AppError, CancelledError, RequestFailedError } from "../errors.js";
import { CliError } from "./cli-error.js";
import type { ImportFormat } from "@base-context/protocol";
import { DETECT_LINES } from "../sessions/formats/format.js";
import { detectFormat, readableFormats } from "../sessions/formats/registry.js";

/** Shorter starts of an id match too much to be meant (as git asks for 4 of a hash). */
export const MIN_ID_PREFIX = 4;

/** Errors of the daemon's parts, worded for the command line. */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof AppError) {
    const sessionId = typeof error.data.sessionId === "string" ? error.data.sessionId : undefined;
    switch (error.code) {
      case "session_not_found":
        return new CliError(error.message, ["List the sessions with: base-context sessions"]);
      case "session_exists":
        if (sessionId === undefined) break;
        return new CliError(error.message, [
          `It is already here: base-context show ${sessionId}`,
          "To import the file as a separate copy with a new id, add --new-id.",
        ]);
      case "entry_not_found":
        if (sessionId === undefined) break;
        return new CliError(error.message, [`See the session's entries with: base-context tree ${sessionId}`]);
      case "session_busy":
        return new CliError(error.message, ["Wait for it to finish, then run the command again."]);
    }
    return new CliError(error.message);
  }
  if (error instanceof RequestFailedError) return new CliError(error.message);
  if (error instanceof CancelledError) return new CliError("cancelled; nothing was written");
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const path = (error as NodeJS.ErrnoException | undefined)?.path;
  if (typeof code === "string" && typeof path === "string") return fileError(path, code, (error as Error).message);
  return new CliError(error instanceof Error ? error.message : String(error));
}

/** A session id too short to be looked up by its start. */
export function idTooShort(given: string): CliError {
  return new CliError(`"${given}" is too short to pick a session: give at least ${MIN_ID_PREFIX} characters of its id`, [
    "List the sessions and their ids with: base-context sessions",
  ]);
}

/** What a file problem is called, whichever command met it. */
export function fileError(path: string, code: string, message: string): CliError {
  if (code === "ENOENT")
    return new CliError(`no such file: ${path}`, ["Check the path (base-context sessions lists the sessions already imported)."]);
  if (code === "EISDIR")
    return new CliError(`${path} is a folder, not a session file`, [
      "Give a session file (.jsonl: pi's, Claude Code's or Codex's), or a session of the database by its id (base-context sessions lists them).",
    ]);
  if (code === "EACCES" || code === "EPERM") return new CliError(`cannot read ${path}: permission denied`);
  return new CliError(`cannot read ${path}: ${message}`);
}

/** How much of a file is looked at to tell whether it is a pi session file. */
const SNIFF_BYTES = 64 * 1024;

/**
 * Checks that `path` is a readable, non-empty file that starts like a pi session (its first JSON
 * line is a `{"type":"session",…}` header), so every command reports a wrong file the same way,
 * before any import starts.
 */
export function checkSessionFile(path: string, format?: ImportFormat): void {
  let size: number;
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR", path });
    if (!stat.isFile()) throw new CliError(`${path} is not a regular file`);
    size = stat.size;
  } catch (error) {
    if (error instanceof CliError) throw error;
    const failure = error as NodeJS.ErrnoException;
    throw fileError(path, failure.code ?? "", failure.message);
  }
  if (size === 0) throw new CliError(`${path} is empty: a session file holds a line per entry (pi's starts with a session header line)`);

  const head = Buffer.alloc(Math.min(size, SNIFF_BYTES));
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    readSync(fd, head, 0, head.length, 0);
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    throw fileError(path, failure.code ?? "", failure.message);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const notSession = (why: string) =>
    new CliError(`${path} is not a pi session file: ${why}`, [
      'A pi session file is JSON lines, the first one a header such as {"type":"session","version":3,"id":…}.',
      `Nor is it another format this build reads (${readableFormats()}); name one with --format if detection failed.`,
    ]);
  if (head.includes(0)) throw notSession("it is a binary file");
  const lines = head.toString("utf8").replace(/^\uFEFF/, "").split("\n");
  // The last line may be cut off by the sniff limit: only whole lines count, unless the file is all here.
  const whole = size <= SNIFF_BYTES ? lines : lines.slice(0, -1);
  // Another agent's file (or one named with --format): the import reads and reports it line by line.
  if (format !== undefined && format !== "pi-jsonl") return;
  if (format === undefined && detectFormat(whole.filter((line) => line.trim().length > 0).slice(0, DETECT_LINES)) !== undefined) return;
  for (const line of whole) {
    if (line.trim().length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue; // pi skips lines that are not JSON
    }
    if (typeof value === "object" && value !== null && (value as { type?: unknown }).type === "session") return;
    throw notSession("its first JSON line is not a session header");
  }
  if (whole.length > 0 && size <= SNIFF_BYTES) throw notSession("none of its lines is JSON");
}
