/**
 * Full-text search over what sessions say (SQLite FTS5, built into better-sqlite3). The index
 * `entries_fts` is contentless: it holds only the index, keyed by the entry's `seq`, and the
 * text shown with a hit is taken from the entry itself. Rows are added with each entry
 * (EntryWriter.insert, on append, import and fork) and removed by a trigger when entries go.
 */
import type { SessionEntry } from "@base-context/protocol";
import type { InsertedRow } from "../rows.js";
import { SEARCHABLE_TYPES, searchText } from "../search-text.js";
import type { SqlStatements } from "../statements.js";
import type { SearchHitRow, SearchQuery, SessionMatch } from "../store-engine.js";

const INSERT_TEXT = "INSERT INTO entries_fts (rowid, text) VALUES (?, ?)";

/** Indexes one entry (inside the caller's write transaction). */
export function indexEntry(sql: SqlStatements, row: InsertedRow, entry: SessionEntry): void {
  const text = searchText(entry);
  if (text !== undefined) sql.get(INSERT_TEXT).run(row.seq, text);
}

const SEARCHABLE_OF_SESSION = `SELECT seq, json FROM entries WHERE session_id = ? AND type IN ${SEARCHABLE_TYPES} ORDER BY seq`;

/** Indexes every entry of a session written without EntryWriter.insert (a fork's copied path). */
export function indexSession(sql: SqlStatements, sessionId: string): void {
  for (const row of sql.get<{ seq: number; json: string }>(SEARCHABLE_OF_SESSION).all(sessionId)) {
    const entry = JSON.parse(row.json) as SessionEntry;
    indexEntry(sql, { sessionId, id: entry.id, seq: row.seq }, entry);
  }
}

/**
 * The query as FTS5 syntax: every word must appear, each as a prefix ("theme" finds "themes"),
 * quoted so that punctuation and FTS operators in what people type are only text.
 */
export function ftsQuery(text: string): string | undefined {
  const words = text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word));
  if (words.length === 0) return undefined;
  return words.map((word) => `"${word.replace(/"/g, '""')}"*`).join(" ");
}

// bm25() cannot be used inside an aggregate: the hits are materialized first.
const SESSIONS_BY_TEXT = (withCwd: boolean) => `
  WITH hits AS MATERIALIZED (
    SELECT e.session_id AS sessionId, bm25(entries_fts) AS score, e.seq AS seq
    FROM entries_fts JOIN entries e ON e.seq = entries_fts.rowid JOIN sessions s ON s.id = e.session_id
    WHERE entries_fts MATCH @match AND s.import_started_ms IS NULL ${withCwd ? "AND s.cwd = @cwd" : ""}
  )
  SELECT sessionId, min(score) AS score, count(*) AS hitCount FROM hits
  GROUP BY sessionId ORDER BY score, max(seq) DESC LIMIT @limit`;
const SESSIONS_BY_NAME = (withCwd: boolean) => `
  SELECT id AS sessionId FROM sessions
  WHERE import_started_ms IS NULL AND name LIKE @pattern ESCAPE '\\' ${withCwd ? "AND cwd = @cwd" : ""}
  ORDER BY modified_ms DESC LIMIT @limit`;
const HITS_IN_SESSION = `
  SELECT e.seq AS seq, e.id AS entryId, e.json AS json, bm25(entries_fts) AS score
  FROM entries_fts JOIN entries e ON e.seq = entries_fts.rowid
  WHERE entries_fts MATCH @match AND e.session_id = @sessionId
  ORDER BY score, e.seq DESC LIMIT @hits`;

/** Sessions whose name contains the text first (newest first), then sessions by their best hit. */
export function searchSessions(sql: SqlStatements, query: SearchQuery): SessionMatch[] {
  const withCwd = query.cwd !== undefined;
  const params = { limit: query.limit, ...(withCwd ? { cwd: query.cwd } : {}) };
  const byName = sql
    .get<{ sessionId: string }>(SESSIONS_BY_NAME(withCwd))
    .all({ ...params, pattern: `%${query.text.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%` })
    .map((row) => row.sessionId);
  const match = ftsQuery(query.text);
  const byText =
    match === undefined
      ? []
      : sql.get<{ sessionId: string; score: number; hitCount: number }>(SESSIONS_BY_TEXT(withCwd)).all({ ...params, match });
  const textScores = new Map(byText.map((row) => [row.sessionId, row] as const));

  const ordered = [...byName, ...byText.map((row) => row.sessionId).filter((id) => !byName.includes(id))].slice(0, query.limit);
  return ordered.map((sessionId) => {
    const text = textScores.get(sessionId);
    const hits =
      text && match !== undefined ? sql.get<SearchHitRow>(HITS_IN_SESSION).all({ match, sessionId, hits: query.hitsPerSession }) : [];
    return {
      sessionId,
      score: byName.includes(sessionId) ? Number.NEGATIVE_INFINITY : text!.score,
      hitCount: text?.hitCount ?? 0,
      nameMatches: byName.includes(sessionId),
      hits,
    };
  });
}
