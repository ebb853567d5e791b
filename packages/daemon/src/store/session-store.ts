/**
 * The store: the one object the rest of the daemon uses to reach SQLite. Synchronous (better-sqlite3);
 * every write is a short transaction, so several daemon processes can share one database file.
 */
import { entryNotFound } from "../errors.js";
import { log } from "../log.js";
import { defaultIds, type IdSource } from "../ids.js";
import { defaultDatabasePath } from "../paths.js";
import { Appender, timeMs, type AppendOutcome, type AppendRequest } from "./append.js";
import type { StoreEngine } from "./store-engine.js";
import { EntryWriter } from "./entry-writer.js";
import { Forker } from "./fork.js";
import { CompactionJobs } from "./compaction-jobs.js";
import { ImportWriter, type ImportTarget } from "./import-writer.js";
import type { OwnerProbe } from "./owner.js";
import { pathRows } from "./path-walk.js";
import {
  ENTRY_COLUMNS,
  toSessionRecord,
  toStoredEntry,
  type EntryRow,
  type SessionRecord,
  type SessionRow,
  type StoredEntry,
} from "./rows.js";
import { RequestResults, type StoredRequestResult } from "./request-results.js";
import { SessionsTable, type ListQuery, type NewSession } from "./sessions-table.js";
import type { SearchQuery, SessionMatch } from "./store-engine.js";
import { SqliteEngine } from "./sqlite/sqlite-engine.js";
import type { SqlStatements } from "./statements.js";
import { LOCK_WAIT_BUCKETS_MS, type WriteLockStats } from "./write-runner.js";

export interface SessionStoreOptions {
  /** An engine already open (store/open-store.ts); when absent, SQLite on `path`. */
  engine?: StoreEngine;
  /** Database file; defaults to `defaultDatabasePath()` (its folder is created). */
  path?: string;
  ids?: IdSource;
  /** "worker" (default): PASSIVE checkpoints in a worker thread; "sqlite": SQLite's automatic ones. */
  checkpoints?: "worker" | "sqlite";
  busyTimeoutMs?: number;
  /** How the owners of imports are checked for liveness (tests replace it). */
  ownerProbe?: OwnerProbe;
}

/** What a context is built from: the path suffix that matters, with stored token counts. */
export interface ContextPathRows {
  leafId: string | null;
  /** From the latest compaction's first kept entry (or the root) to the leaf, root side first. */
  entries: StoredEntry[];
  /** Depth of the first entry (entries have consecutive depths from there). */
  minDepth?: number;
  /** How many of `entries` came from the `known` path instead of the database. */
  reused?: number;
  /**
   * Identifies the session row the path was read from (its creation time): a session deleted and
   * imported again under the same id is another session, and nothing known of the first applies.
   */
  sessionStamp?: string;
  compaction?: StoredEntry;
  modelChange?: StoredEntry;
  /** Latest model_change or assistant message naming provider/model (pi's notion of the model). */
  modelEntry?: StoredEntry;
  thinkingLevelChange?: StoredEntry;
}

/**
 * A context path read earlier (with `ContextPathRows.minDepth`): entries never change once
 * written, so the rows it shares with the path asked for now need not be read and parsed again.
 */
export interface KnownContextPath {
  sessionStamp: string;
  minDepth: number;
  /** Consecutive depths from `minDepth`, root side first, ending at the leaf it was read for. */
  entries: readonly StoredEntry[];
  /** Entries it looked up by id (compaction, model and thinking-level entries). */
  byId: ReadonlyMap<string, StoredEntry>;
}

const SELECT_ENTRY = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE session_id = ? AND id = ?`;
const ENTRIES_PAGE = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`;
const LAST_SEQ = "SELECT max(seq) FROM entries WHERE session_id = ?";
const ENTRY_LINKS = `SELECT seq, id, parent_id AS "parentId" FROM entries WHERE session_id = ? ORDER BY seq`;
const SET_TOKENS = "UPDATE entries SET tokens = ? WHERE session_id = ? AND id = ?";
// With the row's seq: a count computed for a row is never stored on another row of the same id
// (the session deleted and written again by another daemon meanwhile).
const SET_TOKENS_OF_ROW = "UPDATE entries SET tokens = ? WHERE session_id = ? AND id = ? AND seq = ?";
// Uses the partial index entries_uncounted (rows with tokens NULL only).
const UNCOUNTED_SESSIONS = `
  SELECT s.id FROM sessions s
  WHERE s.import_started_ms IS NULL AND EXISTS (SELECT 1 FROM entries e WHERE e.session_id = s.id AND e.tokens IS NULL)
  ORDER BY s.modified_ms DESC`;
const LABELS = `SELECT target_id AS "targetId", label FROM labels WHERE session_id = ?`;
const LABEL_OF = "SELECT label FROM labels WHERE session_id = ? AND target_id = ?";
const LEAF_COLUMNS = `
  SELECT e.seq, e.depth, e.compaction_id AS "compactionId", e.model_change_id AS "modelChangeId",
         e.model_entry_id AS "modelEntryId", e.thinking_change_id AS "thinkingChangeId",
         c.depth AS "compactionDepth", c.first_kept_depth AS "firstKeptDepth"
  FROM entries e LEFT JOIN entries c ON c.session_id = e.session_id AND c.id = e.compaction_id
  WHERE e.session_id = ? AND e.id = ?`;

/** How long a write waits for another process's transaction before SQLITE_BUSY. */
const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

/** Requests are retried within minutes; their stored results are kept for a week. */
const REQUEST_RESULT_TTL_MS = 7 * 24 * 3600_000;
/**
 * An import with no recorded owner (written by an older daemon) still flagged after an hour
 * belongs to a daemon that died. Imports with an owner are reclaimed as soon as it is gone.
 */
const STALE_IMPORT_MS = 3600_000;

/**
 * How long counts computed after their entries were stored wait for another write to carry them
 * (`setTokensSoon`). A client appending in a loop appends again well within it, so its appends
 * take the write lock once each; an append on its own costs one more transaction, a moment later.
 */
const DEFERRED_WRITE_MS = 50;

/** A count computed after its entry was stored; with `seq`, stored only on that very row. */
export interface TokenCount {
  id: string;
  seq?: number;
  tokens: number;
}

/** Entries an append wrote, and the session's leaf after it (what `entry/didAppend` reports). */
export interface AppendedEntries {
  sessionId: string;
  entryIds: string[];
  leafId: string;
}

export class SessionStore {
  /** The database file (SQLite), or the server's URL with its password redacted (PostgreSQL). */
  readonly databasePath: string;
  /** The engine under the store (store/store-engine.ts). */
  readonly engine: StoreEngine;
  private readonly sql: SqlStatements;
  private readonly sessions: SessionsTable;
  private readonly writer: EntryWriter;
  private readonly requests: RequestResults;
  private readonly appender: Appender;
  private readonly forker: Forker;
  private readonly importer: ImportWriter;
  private readonly ids: IdSource;
  private readonly appendListeners = new Set<(event: AppendedEntries) => void>();
  /** Compaction jobs (store/compaction-jobs.ts). */
  readonly jobs: CompactionJobs;
  /** Writes deferred counts that no other write has carried yet (`setTokensSoon`). */
  private deferredFlush: NodeJS.Timeout | undefined;

  constructor(options: SessionStoreOptions = {}) {
    this.ids = options.ids ?? defaultIds;
    this.engine =
      options.engine ??
      new SqliteEngine({
        path: options.path ?? defaultDatabasePath(),
        busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
        ...(options.checkpoints ? { checkpoints: options.checkpoints } : {}),
        ...(options.ownerProbe ? { ownerProbe: options.ownerProbe } : {}),
      });
    this.databasePath = this.engine.location;
    this.sql = this.engine.sql;
    const write = <T>(work: () => T, lockKey?: string): T => this.write(work, lockKey);
    this.sessions = new SessionsTable(this.sql);
    this.writer = new EntryWriter(this.sql, this.ids, this.engine);
    this.requests = new RequestResults(this.sql, this.engine);
    const { writer, leafExpectations, writeAsync } = this.engine;
    this.appender = new Appender(this.sql, this.writer, this.sessions, this.requests, this.ids, writer, leafExpectations, writeAsync);
    this.forker = new Forker(this.sql, this.writer, this.sessions, this.ids, write, this.engine.search);
    const { searchWritten, expectImport } = this.engine;
    const asyncWrites = writeAsync && { writeAsync, ...(searchWritten && { searchWritten }), ...(expectImport && { expectImport }) };
    this.importer = new ImportWriter(this.writer, this.sessions, write, asyncWrites);
    this.jobs = new CompactionJobs(this.sql, write, this.engine.owners);
    this.housekeeping();
  }

  /** Writes what was deferred (`setTokensSoon`), then closes the engine (connections, workers). */
  async close(): Promise<void> {
    if (this.engine.isOpen) {
      try {
        this.flushDeferredWrites();
      } catch (error) {
        log("debug", `deferred token counts not written at close (${(error as Error).message}); the backfill counts them again`);
      }
      logWriteLockStats(this.engine.writer.stats);
    }
    await this.engine.close();
  }

  // ---- sessions ------------------------------------------------------------------------------

  createSession(session: NewSession): SessionRecord {
    return this.write(() => {
      this.reclaimImport(session.id);
      this.sessions.insert(session, session.modifiedMs);
      return toSessionRecord(this.sessions.require(session.id));
    }, session.id);
  }

  getSession(sessionId: string): SessionRecord | undefined {
    return this.sessions.get(sessionId);
  }

  /** The session, or AppError session_not_found. */
  requireSession(sessionId: string): SessionRecord {
    return toSessionRecord(this.sessions.require(sessionId));
  }

  listSessions(query: ListQuery): SessionRecord[] {
    return this.sessions.list(query);
  }

  /** Full-text search over what sessions say (store/sqlite/search.ts), in one read transaction. */
  searchSessions(query: SearchQuery): SessionMatch[] {
    return this.read(() => this.engine.search.searchSessions(this.sql, query));
  }

  /**
   * Each complete session's version: a string that changes when the session is appended to,
   * renamed or its leaf moves. With `since` (the `changeStamp` of the last call), undefined when
   * nothing committed since then (read without touching the sessions table where the engine can).
   */
  sessionVersions(since?: string): { stamp: string | undefined; versions: Map<string, string> } | undefined {
    const stamp = this.engine.changeStamp?.();
    if (since !== undefined && stamp !== undefined && stamp === since) return undefined;
    const versions = new Map<string, string>();
    for (const row of this.read(() => this.sessions.versions())) {
      versions.set(row.id, `${row.modifiedMs}:${row.entryCount}:${row.leafId ?? ""}:${row.name ?? ""}`);
    }
    return { stamp, versions };
  }

  /** False when there was no such session. */
  deleteSession(sessionId: string): boolean {
    return this.write(() => this.sessions.get(sessionId) !== undefined && this.sessions.delete(sessionId), sessionId);
  }

  /** Moves the leaf; null = before the first entry. The entry must exist (AppError entry_not_found). */
  setLeaf(sessionId: string, leafId: string | null): void {
    this.write(() => {
      this.sessions.require(sessionId);
      if (leafId !== null) this.requireEntryColumns(sessionId, leafId);
      this.sessions.setLeaf(sessionId, leafId);
    }, sessionId);
  }

  /**
   * Moves the leaf from `from` to `to` in one transaction, with the request's result when given,
   * only if the leaf is still `from` (another daemon process may have moved it): otherwise nothing
   * is written and the leaf found is returned.
   */
  moveLeafIf(
    sessionId: string,
    move: { from: string | null; to: string | null; request?: { id: string; method: string; result: unknown } },
  ): { moved: true } | { moved: false; leafId: string | null } {
    return this.write(() => {
      const leafId = this.sessions.require(sessionId).leaf_id;
      if (leafId !== move.from) return { moved: false, leafId };
      if (move.to !== null) this.requireEntryColumns(sessionId, move.to);
      this.sessions.setLeaf(sessionId, move.to);
      if (move.request) this.requests.save(sessionId, move.request.id, move.request.method, move.request.result, timeMs(this.ids.now()));
      return { moved: true as const };
    }, sessionId);
  }

  fork(sourceId: string, entryId: string, fork: NewSession): SessionRecord {
    return this.forker.fork(sourceId, entryId, fork);
  }

  /** Starts an import; the session is invisible until `finish()` on the returned target. */
  beginImport(session: NewSession): ImportTarget {
    const importing = { ...session, importing: this.engine.owners.current() };
    return this.importer.begin(importing, timeMs(this.ids.now()), (id) => this.reclaimImport(id));
  }

  /**
   * True while another process imports the session `sessionId` for the first time: its row is a
   * half-import whose process is alive. (One whose process is gone is reclaimed by the next import.)
   */
  importInProgress(sessionId: string): boolean {
    const row = this.sessions.row(sessionId);
    return row !== undefined && row.import_started_ms !== null && !this.isAbandonedImport(row, timeMs(this.ids.now()));
  }

  /** Appends what is new in a file to the complete session `sessionId` (an incremental re-import). */
  resumeImport(sessionId: string): ImportTarget {
    return this.importer.resume(sessionId);
  }

  /**
   * Removes every half-imported session whose importing process is gone (run when the store
   * opens; callable at any time). Returns how many were removed.
   */
  reclaimAbandonedImports(): number {
    const now = timeMs(this.ids.now());
    return this.write(() => {
      let removed = 0;
      for (const row of this.sessions.importing()) if (this.isAbandonedImport(row, now) && this.sessions.delete(row.id)) removed++;
      if (removed > 0) log("warn", `removed ${removed} half-imported session(s) left by a process that ended`);
      return removed;
    });
  }

  /** Inside a write: removes the session `id` if it is a half-import whose process is gone. */
  private reclaimImport(id: string): void {
    const row = this.sessions.row(id);
    if (row && row.import_started_ms !== null && this.isAbandonedImport(row, timeMs(this.ids.now()))) {
      log("warn", `session "${id}" was half-imported by process ${row.import_owner_pid ?? "(unknown)"}, which is gone: removed`);
      this.sessions.delete(id);
    }
  }

  private isAbandonedImport(row: SessionRow, nowMs: number): boolean {
    if (row.import_owner_pid === null) return row.import_started_ms! < nowMs - STALE_IMPORT_MS;
    return !this.engine.owners.isAlive({ pid: row.import_owner_pid, start: row.import_owner_start });
  }

  // ---- entries -------------------------------------------------------------------------------

  /**
   * Appends entries in one IMMEDIATE transaction (see AppendRequest). Entries come back with the
   * counts the request carried, else tokens null.
   */
  append(request: AppendRequest): AppendOutcome {
    return this.appended(request.sessionId, this.appender.append(request));
  }

  /**
   * `append`, its commit awaited on the event loop where the engine can (Appender.appendAsync):
   * on SQLite it is written before this returns, as `append` is (an async function's body runs
   * synchronously until it awaits).
   */
  async appendAsync(request: AppendRequest): Promise<AppendOutcome> {
    if (!this.engine.writeAsync) return this.append(request);
    return this.appended(request.sessionId, await this.appender.appendAsync(request));
  }

  /** After an append has committed: the engine hears of the write, the other clients of the entries. */
  private appended(sessionId: string, outcome: AppendOutcome): AppendOutcome {
    if (outcome.status === "appended") this.engine.noteWrite();
    this.announceAppend(sessionId, outcome);
    return outcome;
  }

  /**
   * Called after every committed append that wrote entries (not a replayed requestId, not a
   * stale one), whoever appended: entry/append, labels, compaction commits, branch summaries.
   * Synchronous, in the appending request's async context (the socket server relies on both).
   */
  onDidAppend(listener: (event: AppendedEntries) => void): { dispose(): void } {
    this.appendListeners.add(listener);
    return { dispose: () => this.appendListeners.delete(listener) };
  }

  private announceAppend(sessionId: string, outcome: AppendOutcome): void {
    if (outcome.status !== "appended" || outcome.entries.length === 0 || this.appendListeners.size === 0) return;
    const event: AppendedEntries = { sessionId, entryIds: outcome.entries.map((stored) => stored.entry.id), leafId: outcome.leafId };
    for (const listener of [...this.appendListeners]) {
      try {
        listener(event);
      } catch (error) {
        // The entries are committed: a listener's failure must not turn the append into an error.
        log("error", `append listener failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /**
   * An append and what records it (e.g. a compaction job's new state) in ONE transaction: both
   * are written or neither. `record` sees the outcome, stale and replayed included.
   */
  appendRecorded(request: AppendRequest, record: (outcome: AppendOutcome) => void): AppendOutcome {
    const outcome = this.write(() => {
      const appended = this.appender.append(request);
      record(appended);
      return appended;
    }, request.sessionId);
    this.announceAppend(request.sessionId, outcome);
    return outcome;
  }

  getEntry(sessionId: string, entryId: string): StoredEntry | undefined {
    const row = this.sql.get<EntryRow>(SELECT_ENTRY).get(sessionId, entryId);
    return row && toStoredEntry(row);
  }

  /** Whether the session (complete or still being imported) has the entry, without reading and parsing its JSON. */
  hasEntry(sessionId: string, entryId: string): boolean {
    return this.writer.exists(sessionId, entryId);
  }

  /** Stores counts computed after the fact, in one transaction. Rows that are gone are skipped. */
  setTokensMany(sessionId: string, counts: readonly TokenCount[]): void {
    if (counts.length === 0) return;
    this.write(() => this.writeTokens(sessionId, counts), sessionId);
  }

  /**
   * Stores counts computed after the fact, with the next write of this store (an append, usually)
   * or within `DEFERRED_WRITE_MS`, whichever comes first, instead of taking the write lock for
   * them alone (store/sqlite/write-lock.ts). Until then the row's count is NULL: a reader elsewhere counts
   * it itself, as after a crash. `onDone(true)` once stored; `onDone(false)` if that failed (the
   * session is gone, say): the count stays missing and is computed again when read.
   */
  setTokensSoon(sessionId: string, counts: readonly TokenCount[], onDone?: (stored: boolean) => void): void {
    if (counts.length === 0) {
      onDone?.(true);
      return;
    }
    this.engine.writer.defer(() => this.writeTokens(sessionId, counts), onDone);
    this.deferredFlush ??= setTimeout(() => {
      this.deferredFlush = undefined;
      try {
        this.flushDeferredWrites();
      } catch (error) {
        // Busy beyond the busy timeout, or closed: the next write (or close) carries them.
        log("debug", `deferred token counts not written yet: ${(error as Error).message}`);
      }
    }, DEFERRED_WRITE_MS);
    // An exit without close() loses them like a crash would: the backfill counts them again.
    this.deferredFlush.unref();
  }

  /** Writes deferred counts now (`setTokensSoon`), in one transaction; nothing when none wait. */
  flushDeferredWrites(): void {
    if (this.deferredFlush) clearTimeout(this.deferredFlush);
    this.deferredFlush = undefined;
    if (this.engine.writer.hasDeferred && this.engine.isOpen) this.write(() => undefined);
  }

  private writeTokens(sessionId: string, counts: readonly TokenCount[]): void {
    const byId = this.sql.get(SET_TOKENS);
    const ofRow = this.sql.get(SET_TOKENS_OF_ROW);
    for (const { id, seq, tokens } of counts) {
      if (seq === undefined) byId.run(tokens, sessionId, id);
      else ofRow.run(tokens, sessionId, id, seq);
    }
  }

  /** Complete sessions that have entries without a stored count, most recently modified first. */
  sessionsWithUncountedEntries(): string[] {
    return this.sql.get<string>(UNCOUNTED_SESSIONS).pluck().all();
  }

  /** Up to `limit` entries of a session without a stored count, newest first, below `beforeSeq`. */
  uncountedEntries(sessionId: string, limit: number, beforeSeq = Number.MAX_SAFE_INTEGER): StoredEntry[] {
    return this.engine.uncountedEntries(sessionId, beforeSeq, limit).map(toStoredEntry);
  }

  /**
   * Root → `leafId` (undefined = the current leaf, null = empty path). AppError session_not_found
   * for an unknown session, entry_not_found for an unknown leaf. One read transaction.
   */
  path(sessionId: string, leafId?: string | null): StoredEntry[] {
    return this.read(() => {
      const session = this.sessions.require(sessionId);
      if (leafId === undefined) leafId = session.leaf_id;
      if (leafId === null) return [];
      this.requireEntryColumns(sessionId, leafId);
      return pathRows(this.sql, sessionId, leafId).map(toStoredEntry);
    });
  }

  /**
   * The part of the path a context needs: from the latest compaction's first kept entry (from the
   * compaction itself when that entry is not on the path; from the root without compaction) to the
   * leaf, plus the latest model/thinking entries, which may lie further up. One read transaction.
   */
  contextPath(sessionId: string, leafId?: string | null, known?: KnownContextPath): ContextPathRows {
    return this.read(() => {
      const session = this.sessions.require(sessionId);
      if (leafId === undefined) leafId = session.leaf_id;
      if (leafId === null) return { leafId, entries: [] };
      const leaf = this.sql.get<LeafColumns>(LEAF_COLUMNS).get(sessionId, leafId);
      if (!leaf) throw entryNotFound(sessionId, leafId);
      const minDepth = leaf.compactionId === null ? 0 : (leaf.firstKeptDepth ?? leaf.compactionDepth ?? 0);
      const sessionStamp = session.created_at;
      if (known && (known.sessionStamp !== sessionStamp || known.minDepth !== minDepth)) known = undefined;
      const reuse = known ? this.reuseKnownPath(sessionId, leafId, leaf, known) : undefined;
      const entries = reuse?.entries ?? pathRows(this.sql, sessionId, leafId, minDepth).map(toStoredEntry);
      const result: ContextPathRows = { leafId, entries, minDepth, sessionStamp };
      if (reuse) result.reused = reuse.reused;
      // What the known path looked up by id is reused only with its rows (the same incarnation).
      const knownById = reuse ? known?.byId : undefined;
      const byId = (id: string | null) => (id === null ? undefined : (knownById?.get(id) ?? this.getEntry(sessionId, id)));
      const compaction = byId(leaf.compactionId);
      const modelChange = byId(leaf.modelChangeId);
      const modelEntry = byId(leaf.modelEntryId);
      const thinkingLevelChange = byId(leaf.thinkingChangeId);
      if (compaction) result.compaction = compaction;
      if (modelChange) result.modelChange = modelChange;
      if (modelEntry) result.modelEntry = modelEntry;
      if (thinkingLevelChange) result.thinkingLevelChange = thinkingLevelChange;
      return result;
    });
  }

  /**
   * The path to `leafId` from the known path's rows where it can be: when the leaf is on the known
   * path (a prefix of it), or below the known path's leaf (its rows plus the few read after it).
   * Undefined when the paths part ways: the caller reads the whole path.
   */
  private reuseKnownPath(
    sessionId: string,
    leafId: string,
    leaf: { seq: number; depth: number },
    known: KnownContextPath,
  ): { entries: StoredEntry[]; reused: number } | undefined {
    const knownLeaf = known.entries[known.entries.length - 1];
    if (!knownLeaf) return undefined;
    const knownDepth = known.minDepth + known.entries.length - 1;
    // Rows are matched by id AND seq: seq identifies the row itself, so a session deleted and
    // written again with the same ids (by another daemon, between two reads) is never mistaken
    // for the one the known path was read from. The leaf itself is read from the database in
    // this snapshot, never from the cache (docs/storage.md, "caches").
    if (leaf.depth <= knownDepth) {
      const index = leaf.depth - known.minDepth;
      const same = known.entries[index];
      if (index < 0 || same?.entry.id !== leafId || same.seq !== leaf.seq) return undefined;
      return { entries: known.entries.slice(0, index + 1), reused: index + 1 };
    }
    // Rows from the known leaf's depth down: the first must be the known leaf itself.
    const rows = pathRows(this.sql, sessionId, leafId, knownDepth);
    if (rows[0]?.id !== knownLeaf.entry.id || rows[0].seq !== knownLeaf.seq) return undefined;
    return { entries: known.entries.concat(rows.slice(1).map(toStoredEntry)), reused: known.entries.length };
  }

  /** A session's entries in insertion order, a page at a time (see `rowPages`). */
  *entriesInOrder(sessionId: string, pageSize = 1000): Generator<StoredEntry[]> {
    for (const rows of this.rowPages(sessionId, pageSize)) yield rows.map(toStoredEntry);
  }

  /** The stored JSON of a session's entries in insertion order, a page at a time (for export). */
  *entryJsonPages(sessionId: string, pageSize = 1000): Generator<string[]> {
    for (const rows of this.rowPages(sessionId, pageSize)) yield rows.map((row) => row.json);
  }

  /**
   * The stored JSON and token count of a session's entries in insertion order, a page at a time
   * (for an exact copy into another store: migrate). Also reads a session still being imported.
   */
  *entryRowPages(sessionId: string, pageSize = 1000): Generator<{ json: string; tokens: number | null }[]> {
    for (const rows of this.rowPages(sessionId, pageSize)) yield rows.map((row) => ({ json: row.json, tokens: row.tokens }));
  }

  /** Every entry's seq, id and parent, in insertion order (no JSON: cheap even for large sessions). */
  entryLinks(sessionId: string): { seq: number; id: string; parentId: string | null }[] {
    return this.sql.get<{ seq: number; id: string; parentId: string | null }>(ENTRY_LINKS).all(sessionId);
  }

  /** The stored JSON of the entries with these seqs, in the order given, a page at a time. */
  *entryJsonBySeq(sessionId: string, seqs: readonly number[], pageSize = 1000): Generator<string[]> {
    for (let start = 0; start < seqs.length; start += pageSize) {
      const page = seqs.slice(start, start + pageSize);
      const rows = this.engine.entryJsonBySeq(sessionId, page);
      const bySeq = new Map(rows.map((row) => [row.seq, row.json] as const));
      yield page.flatMap((seq) => {
        const json = bySeq.get(seq);
        return json === undefined ? [] : [json];
      });
    }
  }

  // ---- labels and request results -------------------------------------------------------------

  /** Current labels of the session: target entry id → label. */
  labels(sessionId: string): Map<string, string> {
    const rows = this.sql.get<{ targetId: string; label: string }>(LABELS).all(sessionId);
    return new Map(rows.map((row) => [row.targetId, row.label]));
  }

  label(sessionId: string, targetId: string): string | undefined {
    return this.sql.get<string>(LABEL_OF).pluck().get(sessionId, targetId);
  }

  /** A stored request result (AppError request_id_conflict if the id was used by another method). */
  findRequestResult(sessionId: string, requestId: string, method: string): StoredRequestResult | undefined {
    return this.requests.find(sessionId, requestId, method);
  }

  /** Stores a result for methods that write through other paths (e.g. a compaction that wrote nothing). */
  saveRequestResult(sessionId: string, requestId: string, method: string, result: unknown): void {
    this.write(() => this.requests.save(sessionId, requestId, method, result, timeMs(this.ids.now())), sessionId);
  }

  // ---- internals ---------------------------------------------------------------------------

  /**
   * Pages by seq, up to the last entry present when the first page was read: a long export is not
   * chased by concurrent appends, and no statement stays open between pages (the caller may await).
   */
  private *rowPages(sessionId: string, pageSize: number): Generator<EntryRow[]> {
    const lastSeq = this.sql.get<number | null>(LAST_SEQ).pluck().get(sessionId) ?? 0;
    let afterSeq = 0;
    for (;;) {
      const rows = this.sql.get<EntryRow>(ENTRIES_PAGE).all(sessionId, afterSeq, lastSeq, pageSize);
      if (rows.length === 0) return;
      afterSeq = rows[rows.length - 1]!.seq;
      yield rows;
    }
  }

  private requireEntryColumns(sessionId: string, entryId: string) {
    const columns = this.writer.pathColumns(sessionId, entryId);
    if (!columns) throw entryNotFound(sessionId, entryId);
    return columns;
  }

  private write<T>(work: () => T, lockKey?: string): T {
    return this.engine.write(work, lockKey);
  }

  /** A read transaction: several statements see one snapshot even while other processes write. */
  private read<T>(work: () => T): T {
    return this.engine.read(work);
  }

  private housekeeping(): void {
    const now = timeMs(this.ids.now());
    this.write(() => {
      this.requests.prune(now - REQUEST_RESULT_TTL_MS);
      this.reclaimAbandonedImports();
    });
  }
}

interface LeafColumns {
  seq: number;
  depth: number;
  compactionId: string | null;
  modelChangeId: string | null;
  modelEntryId: string | null;
  thinkingChangeId: string | null;
  compactionDepth: number | null;
  firstKeptDepth: number | null;
}

/** Where the time went on the write lock, for whoever runs with debug logs (benches, contention). */
function logWriteLockStats(stats: Readonly<WriteLockStats>): void {
  if (stats.transactions === 0) return;
  const buckets = stats.waitHistogram
    .map((count, index) => {
      const bound = index < LOCK_WAIT_BUCKETS_MS.length ? `≤${LOCK_WAIT_BUCKETS_MS[index]}` : `>${LOCK_WAIT_BUCKETS_MS.at(-1)}`;
      return `${bound} ms: ${count}`;
    })
    .join(", ");
  log(
    "debug",
    `write lock: ${stats.transactions} transactions, ${stats.contended} waited for another writer ` +
      `(${buckets}; longest ${stats.longestWaitMs.toFixed(1)} ms); ${stats.deferredAlong} deferred writes rode along`,
  );
}
