/**
 * The columns of an entry row as the engine inserts it (EntryWriter's INSERT, by name), and their
 * PostgreSQL types, for the multi-row insert (row-batches.ts).
 */
export type EntryInsert = Record<(typeof ENTRY_COLUMN_ORDER)[number][0], unknown> & { id: string };

export const ENTRY_COLUMN_ORDER = [
  ["session_id", "TEXT"],
  ["id", "TEXT"],
  ["parent_id", "TEXT"],
  ["type", "TEXT"],
  ["role", "TEXT"],
  ["depth", "INTEGER"],
  ["compaction_id", "TEXT"],
  ["first_kept_depth", "INTEGER"],
  ["model_change_id", "TEXT"],
  ["model_entry_id", "TEXT"],
  ["thinking_change_id", "TEXT"],
  ["tokens", "INTEGER"],
  ["json", "TEXT"],
] as const;

/** EntryWriter's named parameters (camelCase) as the row's columns. */
export function entryInsertOf(params: Record<string, unknown>): EntryInsert {
  return {
    session_id: params.sessionId,
    id: params.id as string,
    parent_id: params.parentId,
    type: params.type,
    role: params.role,
    depth: params.depth,
    compaction_id: params.compactionId,
    first_kept_depth: params.firstKeptDepth,
    model_change_id: params.modelChangeId,
    model_entry_id: params.modelEntryId,
    thinking_change_id: params.thinkingChangeId,
    tokens: params.tokens,
    json: params.json,
  };
}
