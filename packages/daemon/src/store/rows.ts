/**
 * The rows as SQLite returns them and the records the store hands out. Entries are stored as the
 * exact JSON that was appended or imported (so export is byte-stable); reading one is a
 * JSON.parse, no schema pass, so imported entries carry only the fields their file had.
 */
import type { SessionEntry } from "@base-context/protocol";

export interface SessionRow {
  id: string;
  cwd: string;
  created_at: string;
  modified_ms: number;
  parent_session: string | null;
  name: string | null;
  header_extra: string;
  leaf_id: string | null;
  entry_count: number;
  first_message: string | null;
  import_started_ms: number | null;
  import_owner_pid: number | null;
  import_owner_start: string | null;
}

/** An entry with what the store keeps beside it. */
export interface EntryRow {
  seq: number;
  id: string;
  parent_id: string | null;
  depth: number;
  tokens: number | null;
  json: string;
}

export interface SessionRecord {
  id: string;
  cwd: string;
  /** ISO-8601 (the pi header's `timestamp`). */
  createdAt: string;
  /** ISO-8601: time of the last append, or of the last entry of an imported file. */
  modifiedAt: string;
  parentSession?: string;
  /** Display name: the latest `session_info` name, else the name the session was created with. */
  name?: string;
  /** Header fields beyond id/cwd/createdAt/parentSession, in their original order (kept for export). */
  headerExtra: Record<string, unknown>;
  leafId: string | null;
  entryCount: number;
  /** Text of the first user message, truncated (FIRST_MESSAGE_MAX_CHARS). */
  firstMessage?: string;
}

export interface StoredEntry {
  entry: SessionEntry;
  /** Stored token count; null while the count is being computed (or was lost in a crash). */
  tokens: number | null;
  /** Distance from the root (a root has depth 0). */
  depth: number;
  /** Insertion order within the database (increasing within a session). */
  seq: number;
  /** Length of the stored JSON, when the entry was read from the database (what caches weigh). */
  jsonChars?: number;
}

export function toSessionRecord(row: SessionRow): SessionRecord {
  const record: SessionRecord = {
    id: row.id,
    cwd: row.cwd,
    createdAt: row.created_at,
    modifiedAt: new Date(row.modified_ms).toISOString(),
    headerExtra: JSON.parse(row.header_extra) as Record<string, unknown>,
    leafId: row.leaf_id,
    entryCount: row.entry_count,
  };
  if (row.parent_session !== null) record.parentSession = row.parent_session;
  if (row.name !== null) record.name = row.name;
  if (row.first_message !== null) record.firstMessage = row.first_message;
  return record;
}

export function toStoredEntry(row: EntryRow): StoredEntry {
  return { entry: JSON.parse(row.json) as SessionEntry, tokens: row.tokens, depth: row.depth, seq: row.seq, jsonChars: row.json.length };
}

export const ENTRY_COLUMNS = "seq, id, parent_id, depth, tokens, json";
export const SESSION_COLUMNS =
  "id, cwd, created_at, modified_ms, parent_session, name, header_extra, leaf_id, entry_count, first_message, import_started_ms, import_owner_pid, import_owner_start";

/**
 * A row just inserted into `entries`. On PostgreSQL its `seq` is read lazily: the INSERT is
 * pipelined with the rest of the transaction, and reading `seq` before the transaction's next
 * answer waits for it (one round trip); after the commit it costs nothing.
 */
/** What a batch of inserts changes on the session row, applied once at the end (EntryWriter.applyTally). */
export interface SessionTally {
  added: number;
  leafId: string | null;
  modifiedMs: number;
  name: string | null;
  firstMessage: string | null;
}

/** A row of request_results: a request's first result (RequestResults), its JSON as stored. */
export interface RequestResultRow {
  sessionId: string;
  requestId: string;
  method: string;
  result: string;
  createdMs: number;
}

export interface InsertedRow {
  readonly sessionId: string;
  readonly id: string;
  readonly seq: number;
}
