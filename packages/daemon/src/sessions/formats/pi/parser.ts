/**
 * Turns the lines of a pi JSONL file, one at a time, into a header and entries migrated to the
 * current version. Malformed lines are skipped with a reason, as pi skips them on load; the
 * first parsed line must be the header (pi refuses the file otherwise).
 */
import type { SessionEntry } from "@base-context/protocol";
import { AppError } from "../../../errors.js";
import type { IdSource } from "../../../ids.js";
import type { LineParser, ParsedLine } from "../format.js";
import { isJsonObject, parseJsonLine } from "../json-line.js";
import { MAX_PARAMS_DEPTH, tooDeepAt } from "@base-context/core";
import { crc32 } from "node:zlib";
import { SnapshotError, SnapshotReader } from "../snapshot.js";
import {
  entryProblem,
  importPruneLine,
  isHeader,
  migrateV1Line,
  migrateV2Line,
  readHeader,
  type PiHeader,
} from "./lines.js";

export type { ParsedLine } from "../format.js";

export class PiLineParser implements LineParser {
  private header: PiHeader | undefined;
  /** Index of the next parsed line among all parsed lines (header = 0), as v1 compactions count. */
  private parsedIndex = 0;
  /** Fresh ids given to lines without one (v1 files), by parsed-line index, for v1 compactions. */
  private readonly givenIds: (string | undefined)[] = [];
  private readonly usedFreshIds = new Set<string>();
  /** The last accepted entry: the parent of the next line that has no id of its own. */
  private previousId: string | null = null;

  constructor(
    private readonly ids: Pick<IdSource, "entryId">,
    from?: unknown,
  ) {
    if (from === undefined) return;
    const state = new SnapshotReader(from, "pi parser");
    const header = state.reader("header");
    this.header = {
      id: header.string("id"),
      version: header.number("version"),
      createdAt: header.optionalString("createdAt"),
      cwd: header.optionalString("cwd"),
      parentSession: header.optionalString("parentSession"),
      extra: header.object("extra"),
    };
    if (this.header.version < 2) throw new SnapshotError("a version 1 file is read whole");
    this.parsedIndex = state.number("parsedIndex");
    this.previousId = state.stringOrNull("previousId");
  }

  /**
   * After the header of a file of version 2 or later: a version 1 file's ids are made at each
   * import and its compactions point at lines by their index, so it is always read whole.
   */
  snapshot(): unknown {
    if (this.header === undefined || this.header.version < 2) return undefined;
    return { header: this.header, parsedIndex: this.parsedIndex, previousId: this.previousId };
  }

  parse(text: string, lineNumber: number): ParsedLine {
    const read = parseJsonLine(text, lineNumber, "id");
    if (read.kind !== "json") return read;
    const { value } = read;
    // pi counts every line that parses, objects or not (v1 compactions point at lines by that count).
    const index = this.parsedIndex++;
    // JSON.parse reads any depth, but every later walk (counting, reply serialization) recurses per
    // level: a line deeper than a request may nest would make its session unreadable.
    const deepAt = tooDeepAt(value, MAX_PARAMS_DEPTH);
    if (deepAt !== undefined) {
      const reason = `nested deeper than ${MAX_PARAMS_DEPTH} levels (at ${deepAt || "the top"})`;
      if (!this.header) throw new AppError("import_failed", `line ${lineNumber}: the session header is ${reason}`, { line: lineNumber });
      return { kind: "skip", reason, ...namedIds(value) };
    }
    if (!this.header) {
      if (!isJsonObject(value) || !isHeader(value)) {
        throw new AppError(
          "import_failed",
          `line ${lineNumber}: expected the pi session header ({"type":"session","id":...}) as the first line`,
          { line: lineNumber },
        );
      }
      this.header = readHeader(value);
      // The agent that wrote the session: pi, unless the header says another (an export of another agent's session).
      this.header.extra.importedFrom ??= "pi-jsonl";
      // Its ids are made here at each import: its session cannot be recognised in a second one.
      return this.header.version < 2 ? { kind: "header", header: this.header, idsOfItsOwn: false } : { kind: "header", header: this.header };
    }
    if (!isJsonObject(value)) return { kind: "skip", reason: "not a JSON object" };
    if (value.type === "session") return { kind: "skip", reason: "a second session header" };
    const migrated = this.migrate(value, index, lineNumber);
    const problem = entryProblem(migrated);
    if (problem !== undefined) return { kind: "skip", reason: problem, ...namedIds(migrated) };
    this.previousId = migrated.id as string;
    // The line as the file has it (migrated), not the schema's output: defaults are not added, so export gives the same bytes.
    const entry = migrated as SessionEntry;
    // Unmigrated, the line is that entry's JSON already: storing it saves serializing it again.
    return migrated === value && this.header!.version >= 3 ? { kind: "entry", entry, json: text } : { kind: "entry", entry };
  }

  private migrate(line: Record<string, unknown>, index: number, lineNumber: number): Record<string, unknown> {
    let migrated = line;
    // v1 lines have no ids. pi also repairs id-less lines appended to a newer file by an old
    // writer the same way: a fresh id, chained to the previous entry.
    if (this.header!.version < 2 || (line.id === undefined && line.parentId === undefined)) {
      const id = this.freshId(lineNumber);
      this.givenIds[index] = id;
      migrated = migrateV1Line(line, id, this.previousId, (at) => (at >= 1 && at < index ? this.givenIds[at] : undefined));
    }
    if (this.header!.version < 3) migrateV2Line(migrated);
    return importPruneLine(migrated);
  }

  /**
   * An id for a line without one. In a file of version 2 or later it comes from the session and
   * the line's number, so a second import of the file (which adds what is new) gives that line the
   * same id and recognises it; a version 1 file's are new at each import.
   */
  private freshId(lineNumber: number): string {
    const made = (attempt: number) =>
      this.header!.version < 2 ? this.ids.entryId() : crc32(`${this.header!.id}\n${lineNumber}\n${attempt}`).toString(16).padStart(8, "0");
    let attempt = 0;
    let id = made(attempt);
    while (this.usedFreshIds.has(id)) id = made(++attempt);
    this.usedFreshIds.add(id);
    return id;
  }
}

/** The id and parent a refused line names, when it names both well enough to be linked. */
function namedIds(value: unknown): { id?: string; parentId?: string | null } {
  if (!isJsonObject(value) || typeof value.id !== "string") return {};
  const parentId = value.parentId;
  return typeof parentId === "string" || parentId === null ? { id: value.id, parentId } : {};
}
