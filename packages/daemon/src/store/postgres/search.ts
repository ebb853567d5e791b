/**
 * Full-text search on PostgreSQL: what store/sqlite/search.ts does on SQLite, on a tsvector table
 * (`entries_fts`, keyed by entries.seq, GIN-indexed; postgres/schema.ts). The same text is
 * indexed (store/search-text.ts), every word typed must appear as a prefix of a stemmed word
 * ("theme" finds "themes", "THEMING" finds "theme"), sessions whose name contains the text come
 * first, and the hits' score is lower-is-better like bm25's. Rows go with their entry (ON DELETE
 * CASCADE), as SQLite's trigger removes them.
 *
 * Words are split here, not by PostgreSQL's parser: its parser reads "/mode" or "a@b.c" as one
 * token, where SQLite's unicode61 tokenizer (and what people expect of a search box) sees
 * words. Letters and digits make words, everything else separates them, diacritics are removed.
 */
import type { SessionEntry } from "@base-context/protocol";
import type { InsertedRow } from "../rows.js";
import { SEARCHABLE_TYPES } from "../search-text.js";
import type { SearchHitRow, SearchQuery, SessionMatch } from "../store-engine.js";
import { searchText } from "../search-text.js";
import { SEARCH_CONFIG } from "./schema.js";

export type { SearchHitRow, SearchQuery, SessionMatch } from "../store-engine.js";
export { SEARCHABLE_TYPES } from "../search-text.js";

/** The statements this module runs (positional `?` parameters): the store's SqlStatements. */
export interface SearchStatements {
  get<Row = unknown>(sql: string): {
    all(...params: unknown[]): Row[];
    run(...params: unknown[]): { changes: number };
  };
}

const TO_QUERY = `to_tsquery('${SEARCH_CONFIG}', ?)`;
// The seq is the entry's, found by its id (one unique-index read, in the transaction that
// inserted it): the INSERT's own RETURNING seq need not be waited for.
const INSERT_TEXT = `
  INSERT INTO entries_fts (seq, session_id, vector)
  SELECT seq, session_id, to_tsvector('${SEARCH_CONFIG}', ?) FROM entries WHERE session_id = ? AND id = ?`;
const SEARCHABLE_OF_SESSION = `
  SELECT seq, json FROM entries
  WHERE session_id = ? AND type IN ${SEARCHABLE_TYPES} ORDER BY seq`;

/**
 * Longest word indexed, in characters: PostgreSQL skips words over 2047 bytes (with a notice),
 * so longer ones (pasted hashes, base64) are cut, in the index and in queries alike, and are
 * still found by their beginning.
 */
export const SEARCH_WORD_MAX_CHARS = 500;

/** The words of a text as the index holds them: lower case, without diacritics, letters and digits only. */
export function searchWords(text: string): string[] {
  const words = text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.map((word) => (word.length > SEARCH_WORD_MAX_CHARS ? word.slice(0, SEARCH_WORD_MAX_CHARS) : word));
}

/** Indexes one entry (inside the caller's write transaction). */
export function indexEntry(sql: SearchStatements, row: Pick<InsertedRow, "sessionId" | "id">, entry: SessionEntry): void {
  const words = indexedWords(entry);
  if (words !== undefined) sql.get(INSERT_TEXT).run(words, row.sessionId, row.id);
}

/** What the index keeps of an entry (its words, space-separated), or undefined when nothing. */
export function indexedWords(entry: SessionEntry): string | undefined {
  const text = searchText(entry);
  if (text === undefined) return undefined;
  const words = searchWords(text);
  return words.length > 0 ? words.join(" ") : undefined;
}

/** Indexes every entry of a session written without EntryWriter.insert (a fork's copied path). */
export function indexSession(sql: SearchStatements, sessionId: string): void {
  for (const row of sql.get<{ seq: number; json: string }>(SEARCHABLE_OF_SESSION).all(sessionId)) {
    const entry = JSON.parse(row.json) as SessionEntry;
    indexEntry(sql, { sessionId, id: entry.id }, entry);
  }
}

/**
 * The query as tsquery syntax: every typed word must appear (`&`), each as a prefix of a stemmed
 * word; a word made of several parts ("NEAR(a", "secret-word") is a phrase of them whose last part
 * is a prefix, as SQLite's quoted `"…"*` phrases are. Only letters and digits reach the syntax, so
 * operators and quotes in what people type are only separators.
 */
export function tsQuery(text: string): string | undefined {
  const phrases = text
    .split(/\s+/)
    .map((word) => searchWords(word))
    .filter((parts) => parts.length > 0)
    .map((parts) => `${parts.join(" <-> ")}:*`);
  return phrases.length === 0 ? undefined : phrases.join(" & ");
}

// ts_rank is higher-is-better; its negation keeps bm25's order (lower is better). Normalisation 1
// divides by the log of the entry's length, so a short entry that is all about the words ranks
// above a long one that mentions them once.
const SCORE = `-ts_rank(f.vector, ${TO_QUERY}, 1)`;
const SESSIONS_BY_TEXT = (withCwd: boolean) => `
  SELECT f.session_id AS "sessionId", min(${SCORE}) AS score, count(*) AS "hitCount"
  FROM entries_fts f JOIN sessions s ON s.id = f.session_id
  WHERE f.vector @@ ${TO_QUERY} AND s.import_started_ms IS NULL ${withCwd ? "AND s.cwd = ?" : ""}
  GROUP BY f.session_id ORDER BY score, max(f.seq) DESC LIMIT ?`;
// ILIKE: SQLite's LIKE ignores case, PostgreSQL's does not.
const SESSIONS_BY_NAME = (withCwd: boolean) => `
  SELECT id AS "sessionId" FROM sessions
  WHERE import_started_ms IS NULL AND name ILIKE ? ESCAPE '\\' ${withCwd ? "AND cwd = ?" : ""}
  ORDER BY modified_ms DESC LIMIT ?`;
const HITS_IN_SESSION = `
  SELECT e.seq AS seq, e.id AS "entryId", e.json AS json, ${SCORE} AS score
  FROM entries_fts f JOIN entries e ON e.seq = f.seq
  WHERE f.session_id = ? AND f.vector @@ ${TO_QUERY}
  ORDER BY score, e.seq DESC LIMIT ?`;

/** Sessions whose name contains the text first (newest first), then sessions by their best hit. */
export function searchSessions(sql: SearchStatements, query: SearchQuery): SessionMatch[] {
  const withCwd = query.cwd !== undefined;
  const cwd = withCwd ? [query.cwd] : [];
  const pattern = `%${query.text.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const byName = sql
    .get<{ sessionId: string }>(SESSIONS_BY_NAME(withCwd))
    .all(pattern, ...cwd, query.limit)
    .map((row) => row.sessionId);
  const match = tsQuery(query.text);
  const byText =
    match === undefined
      ? []
      : sql.get<{ sessionId: string; score: number; hitCount: number }>(SESSIONS_BY_TEXT(withCwd)).all(match, match, ...cwd, query.limit);
  const textScores = new Map(byText.map((row) => [row.sessionId, row] as const));

  const ordered = [...byName, ...byText.map((row) => row.sessionId).filter((id) => !byName.includes(id))].slice(0, query.limit);
  return ordered.map((sessionId) => {
    const text = textScores.get(sessionId);
    const hits =
      text && match !== undefined
        ? sql
            .get<SearchHitRow>(HITS_IN_SESSION)
            .all(match, sessionId, match, query.hitsPerSession)
            .map((hit) => ({ ...hit, seq: Number(hit.seq), score: Number(hit.score) }))
        : [];
    return {
      sessionId,
      score: byName.includes(sessionId) ? Number.NEGATIVE_INFINITY : Number(text!.score),
      hitCount: Number(text?.hitCount ?? 0),
      nameMatches: byName.includes(sessionId),
      hits,
    };
  });
}
