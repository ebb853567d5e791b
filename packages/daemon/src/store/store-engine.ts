/**
 * The engine seam (docs/storage.md): what differs between SQLite and PostgreSQL, behind one
 * small interface, so that SessionStore and every store/ module above the SQL keep one
 * implementation. The store logic talks SQL through `sql` (store/statements.ts) and runs it in
 * the engine's transactions; what cannot be written portably (schema and migrations, full-text
 * search, `json_each`/`INDEXED BY` statements, checkpoints, owner liveness) is the engine's.
 *
 * Synchronous on both engines (docs/design.md, "One store contract, two engines"), but for
 * `writeAsync`: PostgreSQL's commit of an append or an import batch awaited on the event loop
 * (docs/design.md, "One client's network is not the others'").
 */
import type { SessionEntry } from "@base-context/protocol";
import type { ProcessOwner } from "./owner.js";
import type { EntryRow, InsertedRow, RequestResultRow, SessionTally } from "./rows.js";
import type { SqlStatements } from "./statements.js";
import type { WriteRunner } from "./write-runner.js";

export type EngineKind = "sqlite" | "postgres";

export interface SearchQuery {
  text: string;
  cwd?: string | undefined;
  limit: number;
  /** Hits listed per session. */
  hitsPerSession: number;
}

export interface SearchHitRow {
  seq: number;
  entryId: string;
  json: string;
  score: number;
}

export interface SessionMatch {
  sessionId: string;
  /** bm25 of the best hit (lower is better), or -Infinity when only the name matched. */
  score: number;
  hitCount: number;
  nameMatches: boolean;
  hits: SearchHitRow[];
}

/** Full-text search: SQLite's FTS5 (store/sqlite/search.ts) or PostgreSQL's tsvector (store/postgres/search.ts). */
export interface SearchIndex {
  /** Indexes one entry (inside the caller's write transaction). */
  indexEntry(sql: SqlStatements, row: InsertedRow, entry: SessionEntry): void;
  /** Indexes every entry of a session written without EntryWriter.insert (a fork's copied path). */
  indexSession(sql: SqlStatements, sessionId: string): void;
  searchSessions(sql: SqlStatements, query: SearchQuery): SessionMatch[];
}

/**
 * Who owns a running import or compaction job, and whether that owner still runs. SQLite: a
 * process on this machine (pid + start identity, store/owner.ts). PostgreSQL: a daemon's lease,
 * held across hosts (store/postgres/lease.ts).
 */
export interface StoreOwners {
  /** This daemon as an owner. */
  current(): ProcessOwner;
  /** Whether `owner` is this daemon. */
  isSelf(owner: ProcessOwner): boolean;
  /** Whether `owner` still runs (for this daemon itself: true). */
  isAlive(owner: ProcessOwner): boolean;
}

/**
 * An engine's way to append in one round trip when the session's leaf is the one this daemon last
 * saw (PostgreSQL: postgres/postgres-engine.ts; docs/design.md). The append then reads nothing
 * before writing: the check that the leaf is still that one goes to the server with the writes,
 * under the session's write lock, and fails the transaction when it is not; so does an entry id
 * or requestId already taken (the unique indexes). Such a miss is made again the ordinary way.
 */
export interface LeafExpectations {
  /** False inside an open transaction: a nested append takes the ordinary way. */
  readonly usable: boolean;
  /** Sends, in the append's transaction, the check that `leaf` is still the session's leaf. */
  expect(sessionId: string, leaf: { id: string; seq: number }): void;
  /** Whether a failed attempt is a miss (made again the ordinary way) rather than an error. */
  isMiss(error: unknown): boolean;
}

export interface WriteAsyncOptions {
  /**
   * The search rows of the entries `work` inserts are written in a transaction of their own once
   * this one has committed (the server indexes while the caller writes on): only for a session
   * nobody sees until `searchWritten` has settled (a fresh import).
   */
  searchApart?: boolean;
}

export interface StoreEngine {
  readonly kind: EngineKind;
  /** Where the data is, for messages and logs: the file path, or the URL with its password redacted. */
  readonly location: string;
  readonly sql: SqlStatements;
  /**
   * Write transactions (nested calls are savepoints of the outer one). `lockKey` names the
   * session the work writes: PostgreSQL serialises writers per session with an advisory lock on
   * it (taken inside a transaction already open when that one did not name it); SQLite's
   * BEGIN IMMEDIATE already serialises every writer and ignores it.
   */
  readonly writer: WriteRunner;
  /** A write through `writer`, then whatever the engine does after a write that changed rows (checkpoints). */
  write<T>(work: () => T, lockKey?: string): T;
  /** Called after `writer` committed an append that wrote rows (the append path skips `write`'s bookkeeping). */
  noteWrite(): void;
  /** A read transaction: the statements in `work` see one snapshot while others write. */
  read<T>(work: () => T): T;
  /**
   * A value that changes whenever a transaction that changed rows committed, by this daemon or
   * any other process (SQLite: its connection's `total_changes()` and the file's
   * `data_version`), so a watcher reads the sessions table only after a change. Absent where
   * there is no such cheap value (PostgreSQL): the watcher reads the table each time.
   */
  changeStamp?(): string;
  readonly search: SearchIndex;
  /**
   * Runs an INSERT (named parameters) into a table keyed by `seq` and returns the new row's seq.
   * SQLite: the statement's last insert rowid (`RETURNING` costs more there, on the
   * entries table); PostgreSQL: `RETURNING seq`, sent without waiting inside a transaction and
   * read when `seq` is (see InsertedRow).
   */
  insertReturningSeq(insertSql: string, params: Record<string, unknown>): { readonly seq: number };
  /**
   * Takes the session row's tally of entries inserted in the open transaction and not sent yet,
   * to write it with them (PostgreSQL: the one statement of row-batches.ts); false when it does
   * not, and the caller runs its UPDATE. Absent on SQLite, where every statement is a call.
   */
  tallyWithEntries?(sessionId: string, tally: Readonly<SessionTally>): boolean;
  /**
   * Takes a request's first result, stored in the open transaction, to write it with the entries
   * inserted and not sent yet (PostgreSQL: the same statement); false when it does not, and the
   * caller runs its INSERT. Absent on SQLite.
   */
  requestResultWithEntries?(row: RequestResultRow): boolean;
  /** The stored JSON of the entries with these seqs (any order; missing ones left out). */
  entryJsonBySeq(sessionId: string, seqs: readonly number[]): { seq: number; json: string }[];
  /** Which of `ids` the session has (PostgreSQL: one statement; SQLite: a lookup each, as cheap there). */
  existingEntryIds(sessionId: string, ids: readonly string[]): Set<string>;
  /** Entries of a session without a stored count below `beforeSeq`, newest first. */
  uncountedEntries(sessionId: string, beforeSeq: number, limit: number): EntryRow[];
  readonly owners: StoreOwners;
  /**
   * A write of one session whose commit is awaited on the event loop instead of blocking the
   * thread (docs/design.md, "One client's network is not the others'"): `work` runs at once (what
   * it reads is waited for, what it writes is sent), and the promise settles with its result once
   * the server has committed. PostgreSQL only: SQLite's writes wait for no network.
   */
  readonly writeAsync?: <T>(work: () => T, lockKey: string, options?: WriteAsyncOptions) => Promise<T>;
  /**
   * Settles once the search rows written apart for `sessionId` (`searchApart`) are committed;
   * rejects with the first failure among them. Absent where nothing is written apart.
   */
  readonly searchWritten?: (sessionId: string) => Promise<void>;
  /**
   * Sends, in the open write transaction, the check that `sessionId` is still being imported by
   * `owner` (any owner when undefined): the transaction fails with an error saying the session
   * disappeared during its import when it is not. For imports that read nothing first.
   */
  readonly expectImport?: (sessionId: string, owner: ProcessOwner | undefined) => void;
  /** Appends in one round trip where the engine can (absent: every append reads first, as on SQLite). */
  readonly leafExpectations?: LeafExpectations;
  readonly isOpen: boolean;
  /** Flushing is the store's; this closes connections and stops the engine's workers. */
  close(): Promise<void>;
}
