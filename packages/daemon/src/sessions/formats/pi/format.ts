/** pi's JSONL session files (docs/design.md#pi-session-files): the default format. */
import { isJsonObject } from "../json-line.js";
import { isHeader } from "./lines.js";
import { PiLineParser } from "./parser.js";
import type { SessionFormat } from "../format.js";

export const piFormat: SessionFormat = {
  name: "pi-jsonl",
  label: "a pi session file",
  headerHint: 'a session header ({"type":"session","id":...})',
  detect(firstLines) {
    const first = firstLines[0];
    if (first === undefined) return false;
    try {
      const value: unknown = JSON.parse(first.startsWith("\uFEFF") ? first.slice(1) : first);
      return isJsonObject(value) && isHeader(value);
    } catch {
      return false;
    }
  },
  createParser: (ids, from) => new PiLineParser(ids, from),
};
