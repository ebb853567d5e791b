/**
 * Inserting one entry row (with its path columns and label-index effect) and the per-session
 * bookkeeping that goes with it. Shared by append, import and fork; callers run it inside their
 * transaction and decide what is valid.
 */
import type { SessionEntry } from "@base-context/protocol";
import type { IdSource } from "../ids.js";
import { ancestorAtDepth, pathRows } from "./path-walk.js";
import { toStoredEntry, type SessionTally, type StoredEntry } from "./rows.js";
import {
  firstMessageText,
  messageRole,
  pathColumnsFor,
  sessionInfoName,
  type PathColumns,
} from "./path-columns.js";
import type { StoreEngine } from "./store-engine.js";
import type { SqlStatements } from "./statements.js";

const SELECT_PATH_COLUMNS = `
  SELECT id, depth, compaction_id AS "compactionId", model_change_id AS "modelChangeId",
         model_entry_id AS "modelEntryId", thinking_change_id AS "thinkingChangeId"
  FROM entries WHERE session_id = ? AND id = ?`;
const ENTRY_EXISTS = "SELECT 1 FROM entries WHERE session_id = ? AND id = ?";
const INSERT_ENTRY = `
  INSERT INTO entries (session_id, id, parent_id, type, role, depth, compaction_id, first_kept_depth,
                       model_change_id, model_entry_id, thinking_change_id, tokens, json)
  VALUES (@sessionId, @id, @parentId, @type, @role, @depth, @compactionId, @firstKeptDepth,
          @modelChangeId, @modelEntryId, @thinkingChangeId, @tokens, @json)`;
const UPSERT_LABEL = `
  INSERT INTO labels (session_id, target_id, label, label_entry_id) VALUES (?, ?, ?, ?)
  ON CONFLICT (session_id, target_id) DO UPDATE SET label = excluded.label, label_entry_id = excluded.label_entry_id`;
const DELETE_LABEL = "DELETE FROM labels WHERE session_id = ? AND target_id = ?";
// PostgreSQL's bc_write_entries (postgres/schema.ts) applies the same tally: keep the two alike.
const UPDATE_SESSION = `
  UPDATE sessions SET
    leaf_id = @leafId,
    entry_count = entry_count + @added,
    modified_ms = CASE WHEN modified_ms > @modifiedMs THEN modified_ms ELSE @modifiedMs END,
    name = coalesce(@name, name),
    first_message = coalesce(first_message, @firstMessage)
  WHERE id = @sessionId`;

/** How many fresh ids to try before giving up: 8 hex chars collide only in huge sessions. */
const FRESH_ID_ATTEMPTS = 32;

export function emptyTally(leafId: string | null, modifiedMs: number): SessionTally {
  return { added: 0, leafId, modifiedMs, name: null, firstMessage: null };
}

/** The path columns of an inserted entry and its insertion order (`seq`: see InsertedRow). */
export interface InsertedEntry extends PathColumns {
  readonly seq: number;
}

export interface InsertOptions {
  tokens: number | null;
  /** For a compaction: depth of its first kept entry when that entry is on its path. */
  firstKeptDepth: number | null;
  /** The entry's JSON when the caller has it already (an imported line): stored instead of serializing `entry`. */
  json?: string | undefined;
}

export class EntryWriter {
  constructor(
    private readonly sql: SqlStatements,
    private readonly ids: Pick<IdSource, "entryId">,
    /** Search indexing and the INSERT that returns the new row's seq (store/store-engine.ts). */
    private readonly engine: Pick<StoreEngine, "search" | "insertReturningSeq" | "existingEntryIds" | "tallyWithEntries">,
  ) {}

  pathColumns(sessionId: string, entryId: string): PathColumns | undefined {
    return this.sql.get<PathColumns>(SELECT_PATH_COLUMNS).get(sessionId, entryId);
  }

  /** Root → `leafId`, whatever state the session is in (an import reads what it has written so far). */
  path(sessionId: string, leafId: string): StoredEntry[] {
    return pathRows(this.sql, sessionId, leafId).map(toStoredEntry);
  }

  exists(sessionId: string, entryId: string): boolean {
    return this.sql.get(ENTRY_EXISTS).get(sessionId, entryId) !== undefined;
  }

  /** Which of `ids` the session already has (one statement on PostgreSQL). */
  existingIds(sessionId: string, ids: readonly string[]): Set<string> {
    return this.engine.existingEntryIds(sessionId, ids);
  }

  /** A new 8-hex id, not checked against the session's ids (the unique index refuses a duplicate). */
  newId(): string {
    return this.ids.entryId();
  }

  /** A new 8-hex id not yet used in the session (checked inside the caller's write transaction). */
  freshId(sessionId: string): string {
    for (let attempt = 0; attempt < FRESH_ID_ATTEMPTS; attempt++) {
      const id = this.ids.entryId();
      if (!this.exists(sessionId, id)) return id;
    }
    throw new Error(`could not find an unused entry id in session "${sessionId}"`);
  }

  /**
   * Depth of `firstKeptEntryId` when it is on the path ending at `parent` (the compaction's
   * parent), else null.
   */
  firstKeptDepth(sessionId: string, firstKeptEntryId: string, parent: PathColumns | null): number | null {
    if (!parent) return null;
    const kept = this.pathColumns(sessionId, firstKeptEntryId);
    if (!kept || kept.depth > parent.depth) return null;
    return ancestorAtDepth(this.sql, sessionId, parent.id, kept.depth) === firstKeptEntryId ? kept.depth : null;
  }

  /** Insert `entry` (already carrying its final id and parentId) and count it in `tally`. */
  insert(sessionId: string, entry: SessionEntry, parent: PathColumns | null, options: InsertOptions, tally: SessionTally): InsertedEntry {
    const columns = pathColumnsFor(entry, parent);
    const row = this.engine.insertReturningSeq(INSERT_ENTRY, {
      sessionId,
      id: entry.id,
      parentId: entry.parentId,
      type: entry.type,
      role: messageRole(entry),
      depth: columns.depth,
      compactionId: columns.compactionId,
      firstKeptDepth: entry.type === "compaction" ? options.firstKeptDepth : null,
      modelChangeId: columns.modelChangeId,
      modelEntryId: columns.modelEntryId,
      thinkingChangeId: columns.thinkingChangeId,
      tokens: options.tokens,
      json: options.json ?? JSON.stringify(entry),
    });
    if (entry.type === "label") this.applyLabel(sessionId, entry.targetId, entry.label, entry.id);
    this.engine.search.indexEntry(this.sql, { sessionId, id: entry.id, get seq() { return row.seq; } }, entry);
    tally.added += 1;
    tally.leafId = entry.id;
    tally.name = sessionInfoName(entry) ?? tally.name;
    tally.firstMessage ??= firstMessageText(entry) ?? null;
    return Object.defineProperty({ ...columns }, "seq", { get: () => row.seq, enumerable: true }) as InsertedEntry;
  }

  /** A label entry sets the target's label, or clears it when the label is absent or empty (as pi). */
  applyLabel(sessionId: string, targetId: string, label: string | undefined, labelEntryId: string): void {
    if (typeof label === "string" && label.length > 0) this.sql.get(UPSERT_LABEL).run(sessionId, targetId, label, labelEntryId);
    else this.sql.get(DELETE_LABEL).run(sessionId, targetId);
  }

  applyTally(sessionId: string, tally: SessionTally): void {
    if (this.engine.tallyWithEntries?.(sessionId, tally)) return;
    this.sql.get(UPDATE_SESSION).run({ sessionId, ...tally });
  }
}
