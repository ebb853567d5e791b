/** The first step of every agent format's line parser: one line of a JSONL file as a JSON object. */
import { isJsonObject, type JsonObject } from "../pi-format.js";

export type JsonLine = { kind: "blank" } | { kind: "skip"; reason: string } | { kind: "object"; value: JsonObject };

/** A byte-order mark before the first line is dropped; blank lines, invalid JSON and non-objects are said. */
export function readJsonLine(text: string, lineNumber: number): JsonLine {
  const line = lineNumber === 1 && text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (line.trim().length === 0) return { kind: "blank" };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { kind: "skip", reason: `invalid JSON: ${(error as Error).message}` };
  }
  return isJsonObject(value) ? { kind: "object", value } : { kind: "skip", reason: "not a JSON object" };
}
