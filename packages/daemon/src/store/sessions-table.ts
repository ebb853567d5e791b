/**
 * Session rows: create, read, list (keyset-paged, newest modified first), delete, leaf moves.
 */
import { AppError, sessionNotFound } from "../errors.js";
import { SESSION_COLUMNS, toSessionRecord, type SessionRecord, type SessionRow } from "./rows.js";
import type { ProcessOwner } from "./owner.js";
import type { SqlStatements } from "./statements.js";

export interface NewSession {
  id: string;
  cwd: string;
  createdAt: string;
  parentSession?: string | undefined;
  /** Extra header fields, in order; a `name` here is the session's initial display name. */
  headerExtra?: Record<string, unknown>;
  modifiedMs: number;
  /** Set for a session being imported (by this process): it stays invisible until `finishImport`. */
  importing?: ProcessOwner;
}

/** The session row's fields that follow from its entries, for a copy that must keep them as they were. */
export interface FinalSessionFields {
  leafId: string | null;
  modifiedMs: number;
  name: string | null;
  firstMessage: string | null;
}

export interface ListQuery {
  cwd?: string | undefined;
  /** Case-insensitive (ASCII) substring of the name or the first message. */
  query?: string | undefined;
  limit: number;
  /** Keyset position: sessions strictly after this one in (modified desc, id desc) order. */
  after?: { modifiedMs: number; id: string } | undefined;
}

const SELECT_SESSION = `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`;
const INSERT_SESSION = `
  INSERT INTO sessions (id, cwd, created_at, modified_ms, parent_session, name, header_extra, import_started_ms, import_owner_pid, import_owner_start)
  VALUES (@id, @cwd, @createdAt, @modifiedMs, @parentSession, @name, @headerExtra, @importStartedMs, @ownerPid, @ownerStart)`;
const DELETE_SESSION = "DELETE FROM sessions WHERE id = ?";
const SET_LEAF = "UPDATE sessions SET leaf_id = ? WHERE id = ?";
const FINISH_IMPORT = "UPDATE sessions SET import_started_ms = NULL, import_owner_pid = NULL, import_owner_start = NULL WHERE id = ?";
const SET_DERIVED = "UPDATE sessions SET leaf_id = ?, modified_ms = ?, name = ?, first_message = ? WHERE id = ?";
const IMPORTING = `SELECT ${SESSION_COLUMNS} FROM sessions WHERE import_started_ms IS NOT NULL`;
const VERSIONS = `
  SELECT id, modified_ms AS "modifiedMs", entry_count AS "entryCount", leaf_id AS "leafId", name
  FROM sessions WHERE import_started_ms IS NULL`;

/** What tells one state of a session row from another, for a watcher (SessionStore.sessionVersions). */
export interface SessionVersionRow {
  id: string;
  modifiedMs: number;
  entryCount: number;
  leafId: string | null;
  name: string | null;
}

export class SessionsTable {
  constructor(private readonly sql: SqlStatements) {}

  /** The session row, including one that is being imported. */
  row(id: string): SessionRow | undefined {
    return this.sql.get<SessionRow>(SELECT_SESSION).get(id);
  }

  /** A complete (not importing) session, or undefined. */
  get(id: string): SessionRecord | undefined {
    const row = this.row(id);
    return row && row.import_started_ms === null ? toSessionRecord(row) : undefined;
  }

  /** The row of a complete session, or AppError session_not_found. */
  require(id: string): SessionRow {
    const row = this.row(id);
    if (!row || row.import_started_ms !== null) throw sessionNotFound(id);
    return row;
  }

  insert(session: NewSession, nowMs: number): void {
    if (this.row(session.id)) throw sessionExists(session.id);
    const extra = session.headerExtra ?? {};
    this.sql.get(INSERT_SESSION).run({
      id: session.id,
      cwd: session.cwd,
      createdAt: session.createdAt,
      modifiedMs: session.modifiedMs,
      parentSession: session.parentSession ?? null,
      name: typeof extra.name === "string" && extra.name.length > 0 ? extra.name : null,
      headerExtra: JSON.stringify(extra),
      importStartedMs: session.importing ? nowMs : null,
      ownerPid: session.importing?.pid ?? null,
      ownerStart: session.importing?.start ?? null,
    });
  }

  list(query: ListQuery): SessionRecord[] {
    const where = ["import_started_ms IS NULL"];
    const params: Record<string, unknown> = { limit: query.limit };
    if (query.cwd !== undefined) {
      where.push("cwd = @cwd");
      params.cwd = query.cwd;
    }
    if (query.query !== undefined && query.query.length > 0) {
      // lower() on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
      where.push("(lower(name) LIKE lower(@pattern) ESCAPE '\\' OR lower(first_message) LIKE lower(@pattern) ESCAPE '\\')");
      params.pattern = `%${query.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    }
    if (query.after) {
      where.push("(modified_ms < @afterMs OR (modified_ms = @afterMs AND id < @afterId))");
      params.afterMs = query.after.modifiedMs;
      params.afterId = query.after.id;
    }
    // Only 8 distinct SQL texts can arise, so the statement cache stays small.
    const sql = `SELECT ${SESSION_COLUMNS} FROM sessions WHERE ${where.join(" AND ")} ORDER BY modified_ms DESC, id DESC LIMIT @limit`;
    return this.sql.get<SessionRow>(sql).all(params).map(toSessionRecord);
  }

  /** Deletes the session with its entries, labels and request results. False when there was none. */
  delete(id: string): boolean {
    return this.sql.get(DELETE_SESSION).run(id).changes > 0;
  }

  setLeaf(id: string, leafId: string | null): void {
    this.sql.get(SET_LEAF).run(leafId, id);
  }

  /** The fields appends keep up to date, set as given (a copied session's, see ImportTarget.finish). */
  setDerived(id: string, fields: FinalSessionFields): void {
    this.sql.get(SET_DERIVED).run(fields.leafId, fields.modifiedMs, fields.name, fields.firstMessage, id);
  }

  finishImport(id: string): void {
    this.sql.get(FINISH_IMPORT).run(id);
  }

  /** Every complete session's version row (ids, times, counts, leaves and names: no JSON). */
  versions(): SessionVersionRow[] {
    return this.sql.get<SessionVersionRow>(VERSIONS).all();
  }

  /** Rows of sessions being imported (or left half-imported by a process that died). */
  importing(): SessionRow[] {
    return this.sql.get<SessionRow>(IMPORTING).all();
  }
}

export const sessionExists = (sessionId: string) =>
  new AppError("session_exists", `a session with id "${sessionId}" already exists`, { sessionId });
