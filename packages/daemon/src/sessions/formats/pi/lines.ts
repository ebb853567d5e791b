/**
 * pi's JSONL session format (docs/design.md#pi-session-files): the header line both ways, and the
 * per-line migrations of older versions. Pure: no I/O, no store.
 */
import { EntryType, SessionEntry } from "@base-context/protocol";
import type { SessionRecord } from "../../../store/index.js";
import type { SessionFileHeader } from "../format.js";
import { isJsonObject, type JsonObject } from "../json-line.js";

export const PI_SESSION_VERSION = 3;

/** Header fields with a column of their own; everything else is kept verbatim as "extra". */
const KNOWN_HEADER_FIELDS = new Set(["type", "version", "id", "timestamp", "cwd", "parentSession"]);

/** pi's header line: the session, and the format version its lines are migrated from. */
export interface PiHeader extends SessionFileHeader {
  version: number;
}

export function isHeader(value: JsonObject): boolean {
  return value.type === "session" && typeof value.id === "string" && value.id.length > 0;
}

export function readHeader(value: JsonObject): PiHeader {
  const extra: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (!KNOWN_HEADER_FIELDS.has(key)) extra[key] = field;
  // A non-string parentSession has no column; keep it verbatim rather than lose it.
  if (value.parentSession !== undefined && typeof value.parentSession !== "string") extra.parentSession = value.parentSession;
  return {
    id: value.id as string,
    // Version 1 files have no version field.
    version: typeof value.version === "number" ? value.version : 1,
    createdAt: typeof value.timestamp === "string" ? value.timestamp : undefined,
    cwd: typeof value.cwd === "string" ? value.cwd : undefined,
    parentSession: typeof value.parentSession === "string" ? value.parentSession : undefined,
    extra,
  };
}

/** The header line of an export: pi's field order, then the extra fields as imported. */
export function headerLine(session: SessionRecord): string {
  const header: JsonObject = {
    type: "session",
    version: PI_SESSION_VERSION,
    id: session.id,
    timestamp: session.createdAt,
    cwd: session.cwd,
  };
  if (session.parentSession !== undefined) header.parentSession = session.parentSession;
  // A pi file says nothing of its writer: a session read from one is written back byte for byte
  // (another agent's keeps its importedFrom, so its export imported back still names that agent).
  const { importedFrom, ...others } = session.headerExtra;
  return JSON.stringify({ ...header, ...(importedFrom === "pi-jsonl" ? others : session.headerExtra) });
}

/**
 * v1 → v2 for one line: a fresh id, parentId = the previous imported entry, and a compaction's
 * `firstKeptEntryIndex` (an index into the file's parsed lines, header = 0) → `firstKeptEntryId`.
 * Returns a new object with pi's key order; an unresolvable index leaves firstKeptEntryId unset
 * (as pi does), which validation then reports.
 */
export function migrateV1Line(
  line: JsonObject,
  id: string,
  parentId: string | null,
  idAtIndex: (index: number) => string | undefined,
): JsonObject {
  const { type, id: _oldId, parentId: _oldParent, ...rest } = line;
  const migrated: JsonObject = { type, id, parentId, ...rest };
  if (type === "compaction" && typeof rest.firstKeptEntryIndex === "number") {
    const keptId = idAtIndex(rest.firstKeptEntryIndex);
    delete migrated.firstKeptEntryIndex;
    if (keptId !== undefined) migrated.firstKeptEntryId = keptId;
  }
  return migrated;
}

/** v2 → v3 for one line: the message role `hookMessage` became `custom`. Mutates the line. */
export function migrateV2Line(line: JsonObject): void {
  if (line.type === "message" && isJsonObject(line.message) && line.message.role === "hookMessage") {
    line.message.role = "custom";
  }
}

/** Validates a (migrated) line as an entry; returns the reason when it is not one. */
export function entryProblem(line: JsonObject): string | undefined {
  if (!EntryType.safeParse(line.type).success) return `unknown entry type ${JSON.stringify(line.type) ?? "(none)"}`;
  const parsed = SessionEntry.safeParse(line);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at "${issue.path.map(String).join(".")}"` : "";
  return `not a valid ${typeof line.type === "string" ? `"${line.type}" ` : ""}entry${where}: ${issue?.message ?? "rejected"}`;
}

/**
 * pi has no `prune` entry: an export writes it as a `custom` entry of this type (which pi keeps
 * and ignores), its fields under `data`; an import turns such a line back into a `prune` entry.
 */
export const PRUNE_CUSTOM_TYPE = "base-context.prune";

/** A stored entry's JSON as its export line: the same, except a prune entry, as a `custom` one. */
export function exportLine(json: string): string {
  // Cheap test first: only lines that could be a prune entry are parsed.
  if (!json.includes('"prune"')) return json;
  const entry = JSON.parse(json) as JsonObject;
  if (entry.type !== "prune") return json;
  const { type: _type, id, parentId, timestamp, ...data } = entry;
  return JSON.stringify({ type: "custom", id, parentId, timestamp, customType: PRUNE_CUSTOM_TYPE, data });
}

/** A `custom` line an export wrote for a prune entry, as that entry again; other lines unchanged. */
export function importPruneLine(line: JsonObject): JsonObject {
  if (line.type !== "custom" || line.customType !== PRUNE_CUSTOM_TYPE || !isJsonObject(line.data)) return line;
  const candidate: JsonObject = { type: "prune", id: line.id, parentId: line.parentId, timestamp: line.timestamp, ...line.data };
  // Not a valid prune entry (a hand-edited file): kept as the custom entry it is, nothing lost.
  return SessionEntry.safeParse(candidate).success ? candidate : line;
}
