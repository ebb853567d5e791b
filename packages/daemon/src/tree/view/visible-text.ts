/**
 * Lengths and cuts of terminal text that may hold colour codes. A module of its own: the CLI's
 * output (cli/output.ts) needs it, and a daemon starting must not load the tree renderer for it.
 */

/** render.ts's `reset`. */
const RESET = "\x1b[0m";

// eslint-disable-next-line no-control-regex
const ANSI_PATTERN = /\x1b\[[0-9;]*m/g;

export function visibleLength(text: string): number {
  return Array.from(text.replace(ANSI_PATTERN, "")).length;
}

/**
 * A line cut to `width` visible characters, ending with "…" when cut; colour codes are kept
 * (and closed) and do not count.
 */
export function cutVisible(line: string, width: number): string {
  if (!Number.isFinite(width) || visibleLength(line) <= width) return line;
  const keep = Math.max(0, width - 1);
  let out = "";
  let shown = 0;
  let coloured = false;
  // eslint-disable-next-line no-control-regex
  for (const part of line.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith("\x1b[")) {
      out += part;
      coloured = true;
      continue;
    }
    for (const char of Array.from(part)) {
      if (shown >= keep) break;
      out += char;
      shown++;
    }
    if (shown >= keep) break;
  }
  return `${out}${width >= 1 ? "…" : ""}${coloured ? RESET : ""}`;
}
