/**
 * Lines of a JSONL file or string, one at a time. Files are streamed: real pi files grow past
 * Node's 512 MiB string limit and must never be held in memory whole.
 *
 * Both sources split at "\n" and drop a "\r" before it, so files and strings read alike. A file
 * is read in 1 MiB chunks of bytes and cut at newline bytes before decoding: a newline byte never
 * occurs inside a multi-byte UTF-8 character, so each line is decoded whole, once, straight from
 * the chunk (no stream decoder, no readline, no big string sliced into small ones: a third of an
 * import's time went there).
 */
import { open } from "node:fs/promises";

const CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export async function* fileLines(path: string): AsyncGenerator<string> {
  // Opening first turns a missing or unreadable file into a plain error before any work starts.
  const handle = await open(path, "r");
  try {
    /** The bytes of a line that began in an earlier chunk (copies: the chunk buffer is reused). */
    let unfinished: Buffer[] = [];
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
        if (unfinished.length > 0) {
          unfinished.push(chunk.subarray(0, newline));
          const whole = Buffer.concat(unfinished);
          unfinished = [];
          yield decodeLine(whole, 0, whole.length);
        } else {
          yield decodeLine(chunk, start, newline);
        }
        start = newline + 1;
      }
      if (start < chunk.length) unfinished.push(Buffer.from(chunk.subarray(start)));
    }
    if (unfinished.length > 0) {
      const last = Buffer.concat(unfinished);
      if (last.length > 0) yield decodeLine(last, 0, last.length);
    }
  } finally {
    await handle.close();
  }
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
