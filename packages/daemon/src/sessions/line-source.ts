/**
 * Lines of a JSONL file or string, one at a time. Files are streamed: real pi files grow past
 * Node's 512 MiB string limit and must never be held in memory whole.
 *
 * Both sources split at "\n" and drop a "\r" before it, so files and strings read alike. A file
 * is read in 1 MiB chunks of bytes and cut at newline bytes before decoding: a newline byte never
 * occurs inside a multi-byte UTF-8 character, so each line is decoded whole, once, straight from
 * the chunk (no stream decoder, no readline, no big string sliced into small ones: much of an
 * import's time went there).
 */
import { constants } from "node:fs";
import { AppError } from "../errors.js";

const CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const NUL = 0x00;

export interface FileLimits {
  /** Longest line accepted, in bytes (without its line break). */
  maxLineBytes: number;
  /** Largest file accepted, in bytes. */
  maxFileBytes: number;
  /** Checked between chunks: an aborted signal ends the read with its reason. */
  signal?: AbortSignal | undefined;
}

const NO_LIMITS: FileLimits = { maxLineBytes: Number.MAX_SAFE_INTEGER, maxFileBytes: Number.MAX_SAFE_INTEGER };

/**
 * The lines of a regular file. Anything else is refused before a byte is read: a FIFO with no
 * writer would block forever (and hold one of libuv's few threads, stalling every other file
 * operation), `/dev/zero` never ends. The file is opened with O_NONBLOCK so that opening a FIFO
 * returns at once, then checked with fstat on the open descriptor (no race with a rename).
 * A line or file over the limits, or a NUL byte (JSONL is text: JSON escapes control
 * characters), fails with import_failed saying so.
 */
export async function* fileLines(path: string, limits: FileLimits = NO_LIMITS): AsyncGenerator<string> {
  // Opening first turns a missing or unreadable file into a plain error before any work starts.
  const { open } = await import("node:fs/promises");
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw importFailed(`${path} is ${fileKind(stat)}, not a regular file: only session files can be imported`, path);
    if (stat.size > limits.maxFileBytes) {
      throw importFailed(`${path} has ${stat.size} bytes, more than limits.maxImportFileBytes (${limits.maxFileBytes})`, path);
    }
    /** The bytes of a line that began in an earlier chunk (copies: the chunk buffer is reused). */
    let unfinished: Buffer[] = [];
    let unfinishedBytes = 0;
    let totalBytes = 0;
    let lineNumber = 1;
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      limits.signal?.throwIfAborted();
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      totalBytes += bytesRead;
      if (totalBytes > limits.maxFileBytes) {
        throw importFailed(`${path} grew past limits.maxImportFileBytes (${limits.maxFileBytes} bytes) while it was read`, path);
      }
      const chunk = buffer.subarray(0, bytesRead);
      const nul = chunk.indexOf(NUL);
      if (nul !== -1) {
        const line = lineNumber + countNewlines(chunk, 0, nul);
        throw importFailed(
          `${path} is binary, not a pi session file (a NUL byte on line ${line}; session files are JSON text)`,
          path,
          line,
        );
      }
      let start = 0;
      for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
        if (unfinishedBytes + newline - start > limits.maxLineBytes) throw lineTooLong(path, lineNumber, limits.maxLineBytes);
        lineNumber++;
        if (unfinished.length > 0) {
          unfinished.push(chunk.subarray(0, newline));
          const whole = Buffer.concat(unfinished);
          unfinished = [];
          unfinishedBytes = 0;
          yield decodeLine(whole, 0, whole.length);
        } else {
          yield decodeLine(chunk, start, newline);
        }
        start = newline + 1;
      }
      if (start < chunk.length) {
        unfinishedBytes += chunk.length - start;
        // Checked before keeping the bytes: a file without line breaks is refused within one chunk of the limit.
        if (unfinishedBytes > limits.maxLineBytes) throw lineTooLong(path, lineNumber, limits.maxLineBytes);
        unfinished.push(Buffer.from(chunk.subarray(start)));
      }
    }
    if (unfinished.length > 0) {
      const last = Buffer.concat(unfinished);
      if (last.length > 0) yield decodeLine(last, 0, last.length);
    }
  } finally {
    await handle.close();
  }
}

function countNewlines(bytes: Buffer, start: number, end: number): number {
  let count = 0;
  for (let at = bytes.indexOf(NEWLINE, start); at !== -1 && at < end; at = bytes.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

function fileKind(stat: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
}): string {
  if (stat.isDirectory()) return "a folder";
  if (stat.isFIFO()) return "a FIFO (named pipe)";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}

function importFailed(message: string, path: string, line?: number): AppError {
  return new AppError("import_failed", message, line === undefined ? { path } : { path, line });
}

function lineTooLong(path: string, line: number, max: number): AppError {
  return importFailed(`line ${line} of ${path} is longer than limits.maxImportLineBytes (${max} bytes)`, path, line);
}

/** The line in bytes [start, end) without a trailing "\r". */
function decodeLine(bytes: Buffer, start: number, end: number): string {
  if (end > start && bytes[end - 1] === CARRIAGE_RETURN) end--;
  return bytes.toString("utf8", start, end);
}

/** Lines of an in-memory string without splitting it into one big array. Accepts \n and \r\n. */
export function* stringLines(content: string): Generator<string> {
  let start = 0;
  while (start < content.length) {
    let end = content.indexOf("\n", start);
    if (end === -1) end = content.length;
    const line = content.slice(start, end);
    yield line.endsWith("\r") ? line.slice(0, -1) : line;
    start = end + 1;
  }
}
