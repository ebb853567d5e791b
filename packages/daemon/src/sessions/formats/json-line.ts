/** The first step of every agent format's line parser: one line of a JSONL file as JSON. */
import { isJsonObject, type JsonObject } from "../pi-format.js";

export type JsonValueLine = { kind: "blank" } | { kind: "skip"; reason: string } | { kind: "json"; value: unknown };
export type JsonLine = { kind: "blank" } | { kind: "skip"; reason: string } | { kind: "object"; value: JsonObject };

/** A byte-order mark before the first line is dropped; blank lines and invalid JSON are said. */
export function parseJsonLine(text: string, lineNumber: number): JsonValueLine {
  const line = lineNumber === 1 && text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (line.trim().length === 0) return { kind: "blank" };
  try {
    return { kind: "json", value: JSON.parse(line) };
  } catch (error) {
    return { kind: "skip", reason: `invalid JSON: ${(error as Error).message}` };
  }
}

/** As {@link parseJsonLine}, and a line that is not a JSON object is said too. */
export function readJsonLine(text: string, lineNumber: number): JsonLine {
  const read = parseJsonLine(text, lineNumber);
  if (read.kind !== "json") return read;
  return isJsonObject(read.value) ? { kind: "object", value: read.value } : { kind: "skip", reason: "not a JSON object" };
}
