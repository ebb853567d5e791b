/**
 * Lines of a JSONL file or string, one at a time. Files are streamed (readline over a file
 * stream, which pauses the stream while the consumer is busy): real pi files grow past Node's
 * 512 MiB string limit and must never be held in memory whole.
 */
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";

export async function* fileLines(path: string): AsyncGenerator<string> {
  // Opening first turns a missing or unreadable file into a plain error before any work starts.
  const handle = await open(path, "r");
  const input = handle.createReadStream({ encoding: "utf8", highWaterMark: 1 << 20 });
  let failure: Error | undefined;
  const reader = createInterface({ input, crlfDelay: Infinity });
  input.on("error", (error) => {
    failure = error;
    reader.close();
  });
  try {
    for await (const line of reader) yield line;
    if (failure) throw failure;
  } finally {
    reader.close();
    input.destroy();
  }
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
