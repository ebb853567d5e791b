/**
 * Walking a path upwards with a recursive CTE over the (session_id, id) index. Every walk is
 * bounded by depth: it stops at the depth the caller needs (e.g. a compaction's first kept entry)
 * instead of going to the root, and the `depth = up.depth - 1` guard ends it on damaged links.
 */
import type { EntryRow } from "./rows.js";
import type { SqlStatements } from "./statements.js";

const WALK_UP = `
  WITH RECURSIVE up(seq, parent_id, depth) AS (
    SELECT seq, parent_id, depth FROM entries WHERE session_id = @sessionId AND id = @fromId
    UNION ALL
    SELECT e.seq, e.parent_id, e.depth FROM up
      JOIN entries e ON e.session_id = @sessionId AND e.id = up.parent_id AND e.depth = up.depth - 1
      WHERE up.depth > @minDepth
  )`;

/**
 * The same walk carrying the whole rows: each row (and its overflow pages, for big entries) is
 * read once, and rows stream out leaf first without a sort (pathRows puts them root first). A walk
 * that only collects seqs and then joins back to the rows reads every row twice, which on a cold
 * cache (a fresh daemon's first context/build) costs more than the JSON of the rows.
 */
const PATH_ROWS = `
  WITH RECURSIVE up(seq, id, parent_id, depth, tokens, json) AS (
    SELECT seq, id, parent_id, depth, tokens, json FROM entries WHERE session_id = @sessionId AND id = @fromId
    UNION ALL
    SELECT e.seq, e.id, e.parent_id, e.depth, e.tokens, e.json FROM up
      JOIN entries e ON e.session_id = @sessionId AND e.id = up.parent_id AND e.depth = up.depth - 1
      WHERE up.depth > @minDepth
  )
  SELECT seq, id, parent_id, depth, tokens, json FROM up WHERE depth >= @minDepth`;

const ANCESTOR_AT_DEPTH = `${WALK_UP}
  SELECT e.id FROM up JOIN entries e ON e.seq = up.seq WHERE up.depth = @minDepth`;

/** Entries from depth `minDepth` down to `leafId`, root side first. Empty when the leaf does not exist. */
export function pathRows(sql: SqlStatements, sessionId: string, leafId: string, minDepth = 0): EntryRow[] {
  const rows = sql.get<EntryRow>(PATH_ROWS).all({ sessionId, fromId: leafId, minDepth });
  // Leaf first as walked (depth strictly decreasing): a sort of a descending run is a reversal.
  return rows.sort((a, b) => a.depth - b.depth);
}

/** The id of the ancestor of `fromId` (or `fromId` itself) at `depth`, if the path reaches it. */
export function ancestorAtDepth(sql: SqlStatements, sessionId: string, fromId: string, depth: number): string | undefined {
  if (depth < 0) return undefined;
  const row = sql.get<{ id: string }>(ANCESTOR_AT_DEPTH).get({ sessionId, fromId, minDepth: depth });
  return row?.id;
}
