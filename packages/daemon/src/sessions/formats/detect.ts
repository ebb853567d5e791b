/**
 * Which format a file is, from its first non-blank lines. Only those are read (a file of any size
 * costs the same); the import then reads the file from the start.
 */
import { fileLines, stringLines, type FileLimits } from "../line-source.js";
import { DETECT_LINES } from "./format.js";

/** Longest line the test reads whole: a longer first line is cut (detection looks at its start). */
const DETECT_LINE_CHARS = 64 * 1024;

export async function firstLines(
  source: { path?: string | undefined; content?: string | undefined },
  limits?: FileLimits,
): Promise<string[]> {
  const lines: string[] = [];
  const all = source.path !== undefined ? fileLines(source.path, limits) : stringLines(source.content ?? "");
  for await (const line of all) {
    // A line too long to read says nothing here.
    if (typeof line !== "string" || line.trim().length === 0) continue;
    lines.push(line.length > DETECT_LINE_CHARS ? line.slice(0, DETECT_LINE_CHARS) : line);
    // Leaving the loop closes the file (the generator's finally).
    if (lines.length >= DETECT_LINES) break;
  }
  return lines;
}
