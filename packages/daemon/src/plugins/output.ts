/**
 * A plugin's own stdout/stderr (console.log included) is piped out of its worker and turned into
 * daemon log lines. It must never reach the daemon's stdout, which carries protocol bytes only.
 */
import type { Readable } from "node:stream";

/** Longest line kept whole; a plugin printing megabytes without a newline is cut into pieces. */
const MAX_LINE = 8_192;

export function forwardLines(stream: Readable, onLine: (line: string) => void): void {
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      onLine(buffer.slice(0, newline).replace(/\r$/, ""));
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
    }
    while (buffer.length > MAX_LINE) {
      onLine(buffer.slice(0, MAX_LINE));
      buffer = buffer.slice(MAX_LINE);
    }
  });
  stream.on("end", () => {
    if (buffer.length > 0) onLine(buffer);
    buffer = "";
  });
}
