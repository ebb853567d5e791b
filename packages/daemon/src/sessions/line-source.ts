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
import type { FileHandle } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { AppError } from "../errors.js";

const CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const NUL = 0x00;

export interface FileLimits {
  /** Longest line read, in bytes (without its line break); a longer one is passed over. */
  maxLineBytes: number;
  /** Largest file accepted, in bytes. */
  maxFileBytes: number;
  /** Checked between chunks: an aborted signal ends the read with its reason. */
  signal?: AbortSignal | undefined;
}

const NO_LIMITS: FileLimits = { maxLineBytes: Number.MAX_SAFE_INTEGER, maxFileBytes: Number.MAX_SAFE_INTEGER };

/** A line longer than `limits.maxImportLineBytes`: its bytes were passed over, not kept (`bytes`: its length). */
export class LongLine {
  constructor(readonly bytes: number) {}
}

/**
 * Where a file's reading stands, for an import that saves it and one that starts from it
 * (import-state.ts): `offset`, the bytes through the line break of the last whole line given;
 * `crc()`, the CRC-32 of the bytes [0, offset). `terminated` is false for a last line without a
 * line break (a file still being written), which is given but not counted in `offset`: the next
 * import from this offset reads it again. A cursor given to `fileLines` with an offset makes it
 * start there, its CRC carrying on from the one given.
 */
export class LineCursor {
  offset: number;
  terminated = true;
  /** CRC-32 of [0, crcEnd); the bytes [crcEnd, offset) are still in the chunk being read (`pending`). */
  private crcValue: number;
  private crcEnd: number;
  private pending: Buffer | undefined;
  private pendingStart = 0;

  constructor(start: { offset: number; crc: number } = { offset: 0, crc: 0 }) {
    this.offset = start.offset;
    this.crcValue = start.crc;
    this.crcEnd = start.offset;
  }

  crc(): number {
    this.flush();
    return this.crcValue;
  }

  /** The chunk read from `start` (kept only until the next call: the buffer is reused). */
  track(chunk: Buffer | undefined, start: number): void {
    this.flush();
    this.pending = chunk;
    this.pendingStart = start;
  }

  /** Bytes given before the chunk tracked (a line begun in an earlier chunk), in order. */
  add(bytes: Buffer): void {
    this.flush();
    this.crcValue = crc32(bytes, this.crcValue);
    this.crcEnd += bytes.length;
  }

  /** A line passed over (its CRC taken as it was read): the cursor stands at its end. */
  jump(offset: number, crc: number): void {
    this.offset = offset;
    this.crcEnd = offset;
    this.crcValue = crc;
  }

  private flush(): void {
    if (this.pending === undefined || this.offset <= this.crcEnd) return;
    this.crcValue = crc32(this.pending.subarray(this.crcEnd - this.pendingStart, this.offset - this.pendingStart), this.crcValue);
    this.crcEnd = this.offset;
  }
}

/**
 * The lines of a regular file. Anything else is refused before a byte is read: a FIFO with no
 * writer would block forever (and hold one of libuv's few threads, stalling every other file
 * operation), `/dev/zero` never ends. The file is opened with O_NONBLOCK so that opening a FIFO
 * returns at once, then checked with fstat on the open descriptor (no race with a rename).
 * A file over the size limit, or a NUL byte (JSONL is text: JSON escapes control characters),
 * fails with import_failed saying so. A line over the line limit is passed over as it is read
 * (memory stays near the limit) and given as a {@link LongLine}: the lines after it are read.
 */
export async function* fileLines(
  path: string,
  limits: FileLimits = NO_LIMITS,
  cursor = new LineCursor(),
): AsyncGenerator<string | LongLine> {
  // Opening first turns a missing or unreadable file into a plain error before any work starts.
  const { open } = await import("node:fs/promises");
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw importFailed(`${path} is ${fileKind(stat)}, not a regular file: only session files can be imported`, path);
    if (stat.size > limits.maxFileBytes) {
      throw importFailed(`${path} has ${stat.size} bytes, more than limits.maxImportFileBytes (${limits.maxFileBytes})`, path);
    }
    yield* new ChunkedLines(path, limits, cursor).read(handle);
  } finally {
    await handle.close();
  }
}

/** The line splitting of {@link fileLines}, chunk by chunk. */
class ChunkedLines {
  /** The bytes of a line that began in an earlier chunk (copies: the chunk buffer is reused). */
  private unfinished: Buffer[] = [];
  private unfinishedBytes = 0;
  /** A line longer than the limit is being passed over: the CRC so far through its bytes (counted, not kept). */
  private skipCrc: number | undefined;
  private lineNumber = 1;
  private position: number;

  constructor(
    private readonly path: string,
    private readonly limits: FileLimits,
    private readonly cursor: LineCursor,
  ) {
    this.position = cursor.offset;
  }

  async *read(handle: FileHandle): AsyncGenerator<string | LongLine> {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      this.limits.signal?.throwIfAborted();
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, this.position);
      if (bytesRead === 0) break;
      if (this.position + bytesRead > this.limits.maxFileBytes) {
        throw importFailed(`${this.path} grew past limits.maxImportFileBytes (${this.limits.maxFileBytes} bytes) while it was read`, this.path);
      }
      yield* this.chunkLines(buffer.subarray(0, bytesRead));
      this.position += bytesRead;
    }
    // A last line without a line break: given, but the cursor stays before it.
    if (this.skipCrc === undefined && this.unfinishedBytes === 0) return;
    this.cursor.terminated = false;
    yield this.skipCrc !== undefined
      ? new LongLine(this.unfinishedBytes)
      : decodeLine(Buffer.concat(this.unfinished), 0, this.unfinishedBytes);
  }

  private *chunkLines(chunk: Buffer): Generator<string | LongLine> {
    const nul = chunk.indexOf(NUL);
    if (nul !== -1) {
      const line = this.lineNumber + countNewlines(chunk, 0, nul);
      throw importFailed(`${this.path} is binary, not a pi session file (a NUL byte on line ${line}; session files are JSON text)`, this.path, line);
    }
    this.cursor.track(chunk, this.position);
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      const length = this.unfinishedBytes + newline - start;
      this.lineNumber++;
      this.cursor.terminated = true;
      if (this.skipCrc !== undefined) {
        this.cursor.jump(this.position + newline + 1, crc32(chunk.subarray(0, newline + 1), this.skipCrc));
        this.skipCrc = undefined;
        this.unfinishedBytes = 0;
        yield new LongLine(length);
      } else {
        for (const part of this.unfinished) this.cursor.add(part);
        this.cursor.offset = this.position + newline + 1;
        yield length > this.limits.maxLineBytes ? new LongLine(length) : this.line(chunk, start, newline);
        this.unfinished = [];
        this.unfinishedBytes = 0;
      }
      start = newline + 1;
    }
    if (start < chunk.length) this.keepRest(chunk.subarray(start));
    // Lines given from this chunk go into the CRC before the buffer is reused.
    this.cursor.track(undefined, 0);
  }

  private line(chunk: Buffer, start: number, newline: number): string {
    if (this.unfinished.length === 0) return decodeLine(chunk, start, newline);
    this.unfinished.push(chunk.subarray(start, newline));
    const whole = Buffer.concat(this.unfinished);
    return decodeLine(whole, 0, whole.length);
  }

  /** The start of a line that goes on in the next chunk: kept, or, once over the limit, only counted. */
  private keepRest(rest: Buffer): void {
    this.unfinishedBytes += rest.length;
    if (this.skipCrc !== undefined) {
      this.skipCrc = crc32(rest, this.skipCrc);
      return;
    }
    // Checked before keeping the bytes: memory stays within one chunk of the limit.
    if (this.unfinishedBytes <= this.limits.maxLineBytes) {
      this.unfinished.push(Buffer.from(rest));
      return;
    }
    let crc = this.cursor.crc();
    for (const part of this.unfinished) crc = crc32(part, crc);
    this.skipCrc = crc32(rest, crc);
    this.unfinished = [];
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
