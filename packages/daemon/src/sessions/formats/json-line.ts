/** What every format's line parser starts with: one line of a JSONL file as JSON, and JSON objects. */

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

type Unreadable = { kind: "skip"; reason: string; unreadable: { lostId?: string } };
export type JsonValueLine = { kind: "blank" } | Unreadable | { kind: "json"; value: unknown };
export type JsonLine = { kind: "blank" } | Unreadable | { kind: "skip"; reason: string } | { kind: "object"; value: JsonObject };

/**
 * A byte-order mark before the first line is dropped; blank lines and invalid JSON are said.
 * `idField`: the field that holds a line's own id in this format; the id an unreadable line still
 * shows is read from its text (its first `"<idField>":"…"` pair), so the entries that name it as
 * their parent can be bridged over it (import-gaps.ts).
 */
export function parseJsonLine(text: string, lineNumber: number, idField?: string): JsonValueLine {
  const line = lineNumber === 1 && text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (line.trim().length === 0) return { kind: "blank" };
  try {
    return { kind: "json", value: JSON.parse(line) };
  } catch (error) {
    const lostId = idField === undefined ? undefined : shownId(line, idField);
    return { kind: "skip", reason: `invalid JSON: ${(error as Error).message}`, unreadable: lostId === undefined ? {} : { lostId } };
  }
}

/**
 * As {@link parseJsonLine}, and a line that is not a JSON object is said too. A line that starts
 * with neither "{" nor "[" is not parsed: it cannot be an object (nor, mostly, JSON), and a file of
 * junk lines is skipped at the speed it is read (a JSON.parse error thrown costs far more than
 * reading the line). It counts as a line that cannot be read.
 */
export function readJsonLine(text: string, lineNumber: number, idField?: string): JsonLine {
  const at = firstVisible(text, lineNumber);
  if (at === -1) return { kind: "blank" };
  const first = text.charCodeAt(at);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    return { kind: "skip", reason: `not a JSON object: the line starts with ${JSON.stringify(text.slice(at, at + 12))}`, unreadable: {} };
  }
  const read = parseJsonLine(text, lineNumber, idField);
  if (read.kind !== "json") return read;
  return isJsonObject(read.value) ? { kind: "object", value: read.value } : { kind: "skip", reason: "not a JSON object" };
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/** The index of the line's first character that is not white space (nor the first line's byte-order mark); -1: none. */
function firstVisible(text: string, lineNumber: number): number {
  for (let at = lineNumber === 1 && text.startsWith("\uFEFF") ? 1 : 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code !== 0x20 && code !== 0x09 && code !== 0x0d && code !== 0x0a) return at;
  }
  return -1;
}

/** Characters of an unreadable line searched for its id: ids sit before the content (pi) or right after the message (Claude Code). */
const ID_SEARCH_CHARS = 1 << 20;

/** The first `"field":"…"` string of a line's text that follows `{` or `,` (a key, not a quoted word inside a string). */
function shownId(text: string, field: string): string | undefined {
  const key = `"${field}":"`;
  const end = Math.min(text.length, ID_SEARCH_CHARS);
  for (let at = text.indexOf(key); at !== -1 && at < end; at = text.indexOf(key, at + key.length)) {
    const before = text[at - 1];
    if (before !== "{" && before !== ",") continue;
    const start = at + key.length;
    const close = text.indexOf('"', start);
    const id = close === -1 ? "" : text.slice(start, close);
    return id.length > 0 && id.length <= 200 && !id.includes("\\") ? id : undefined;
  }
  return undefined;
}
