/**
 * Where the last import of a file stopped, so the next one reads only what was appended since:
 * the byte offset of the whole lines read, the CRC-32 of those bytes, the line parser's state there
 * (`LineParser.snapshot`), and what identifies the file (device and inode, the CRC-32 of its first
 * and last 4 KiB before the offset). One small JSON file per imported file, in the home's `imports/`
 * folder: the state is about a file of this machine (a PostgreSQL store may be shared by several),
 * and losing it only costs the next import a read of the whole file.
 *
 * Before going on from a saved state, the file is checked to be the one read (`compareFile`): the
 * same inode and the same bytes around the offset; else (a copy, a file moved back) the CRC-32 of
 * all the bytes up to the offset. A file whose first `offset` bytes are not those imported was
 * rewritten, not appended to: the import says so instead of adding near-copies of what it holds.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import type { ImportFormat } from "@base-context/protocol";
import { log } from "../log.js";
import { SnapshotReader } from "./formats/snapshot.js";

/** Bytes at the start of the file and before the offset whose CRC-32 says it is still the file read. */
const WINDOW_BYTES = 4096;
const FORMAT_VERSION = 1;

export interface ImportCheckpoint {
  /** Bytes through the line break of the last whole line read. */
  offset: number;
  /** Lines up to `offset`. */
  line: number;
  /** CRC-32 of the bytes [0, offset). */
  crc: number;
  /** The line parser's snapshot after those lines. */
  parser: unknown;
  /** The last entry read up to there (the history goes on from it over a line that cannot be read). */
  lastEntryId: string | null;
}

export interface SavedImport extends ImportCheckpoint {
  path: string;
  format: ImportFormat;
  sessionId: string;
  dev: number;
  ino: number;
  /** CRC-32 of the first min(offset, 4096) bytes and of the 4096 before the offset. */
  head: number;
  tail: number;
}

/** What a file is to the import saved for it: the one read (go on from the offset), or rewritten. */
export type FileComparison = "same" | "rewritten";

export class ImportStates {
  constructor(private readonly folder: string) {}

  /** The state saved for `path` (an absolute path), or undefined: none, or unreadable (said in the log). */
  load(path: string): SavedImport | undefined {
    let text: string;
    try {
      text = readFileSync(this.file(path), "utf8");
    } catch {
      return undefined;
    }
    try {
      const state = readState(JSON.parse(text));
      return state.path === path ? state : undefined;
    } catch (error) {
      log("warn", `the import state saved for ${path} cannot be read (${(error as Error).message}): the file is read whole`);
      return undefined;
    }
  }

  /** Saved beside and renamed over: a reader never sees half of it. A failure is logged (the next import reads the file whole). */
  save(state: SavedImport): void {
    const file = this.file(state.path);
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      mkdirSync(this.folder, { recursive: true, mode: 0o700 });
      writeFileSync(temporary, JSON.stringify({ version: FORMAT_VERSION, ...state }), { mode: 0o600 });
      renameSync(temporary, file);
    } catch (error) {
      rmSync(temporary, { force: true });
      log("warn", `could not save where the import of ${state.path} stopped (${(error as Error).message}): the next import reads it whole`);
    }
  }

  private file(path: string): string {
    // The name only spreads the files; the path inside says whose state it is.
    return join(this.folder, `${crc32(path).toString(16).padStart(8, "0")}-${crc32(`${path}\n`).toString(16).padStart(8, "0")}.json`);
  }
}

/** What identifies the file at `offset`, for a state to save: its inode and the CRCs of its two windows. */
export async function fileIdentity(handle: FileHandle, offset: number): Promise<Pick<SavedImport, "dev" | "ino" | "head" | "tail">> {
  const stat = await handle.stat();
  const { head, tail } = await windows(handle, offset);
  return { dev: stat.dev, ino: stat.ino, head, tail };
}

/** Whether the file open in `handle` still holds, in its first `saved.offset` bytes, what that import read. */
export async function compareFile(handle: FileHandle, saved: SavedImport): Promise<FileComparison> {
  const stat = await handle.stat();
  if (stat.size < saved.offset) return "rewritten";
  const { head, tail } = await windows(handle, saved.offset);
  if (head !== saved.head || tail !== saved.tail) return "rewritten";
  if (stat.dev === saved.dev && stat.ino === saved.ino) return "same";
  // Another file with the same start and end (copied, moved back from a backup): every byte read is compared.
  return (await prefixCrc(handle, saved.offset)) === saved.crc ? "same" : "rewritten";
}

async function windows(handle: FileHandle, offset: number): Promise<{ head: number; tail: number }> {
  const headBytes = Math.min(offset, WINDOW_BYTES);
  const tailStart = Math.max(0, offset - WINDOW_BYTES);
  const buffer = Buffer.alloc(headBytes + (offset - tailStart));
  await handle.read(buffer, 0, headBytes, 0);
  await handle.read(buffer, headBytes, offset - tailStart, tailStart);
  return { head: crc32(buffer.subarray(0, headBytes)), tail: crc32(buffer.subarray(headBytes)) };
}

async function prefixCrc(handle: FileHandle, end: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(1 << 20);
  let crc = 0;
  for (let position = 0; position < end; ) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - position), position);
    if (bytesRead === 0) break;
    crc = crc32(buffer.subarray(0, bytesRead), crc);
    position += bytesRead;
  }
  return crc;
}

function readState(value: unknown): SavedImport {
  const state = new SnapshotReader(value, "import state");
  if (state.number("version") !== FORMAT_VERSION) throw new Error(`version ${state.number("version")}, not ${FORMAT_VERSION}`);
  return {
    path: state.string("path"),
    format: state.string("format") as ImportFormat,
    sessionId: state.string("sessionId"),
    offset: state.number("offset"),
    line: state.number("line"),
    crc: state.number("crc"),
    parser: state.object("parser"),
    lastEntryId: state.stringOrNull("lastEntryId"),
    dev: state.number("dev"),
    ino: state.number("ino"),
    head: state.number("head"),
    tail: state.number("tail"),
  };
}
