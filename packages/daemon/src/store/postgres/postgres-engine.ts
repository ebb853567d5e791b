/**
 * The PostgreSQL engine (docs/storage.md): many daemons on many hosts share one database.
 * Synchronous like SQLite's (docs/design.md): a worker thread owns the `pg` pool and the main
 * thread blocks on each call (sync-postgres.ts), except for the commit of an append or an import
 * batch, awaited on the event loop (`writeAsync`). What differs from SQLite is here and in the
 * modules it wires: migrations (schema.ts), per-session write locks (pg-write-runner.ts),
 * tsvector search (search.ts), lease-based owners (lease.ts).
 *
 * Caches above the store see other daemons' writes by a version check, not by notifications:
 * every context read takes the session row (leaf, creation stamp) and the leaf's row from the
 * database in one snapshot, and reuses cached rows only when their identity (seq, never reused
 * by PostgreSQL's identity column) matches (SessionStore.contextPath).
 */
import { ENTRY_COLUMNS, type EntryRow, type RequestResultRow, type SessionTally } from "../rows.js";
import type { LeafExpectations, SearchIndex, StoreEngine, StoreOwners, WriteAsyncOptions } from "../store-engine.js";
import { log } from "../../log.js";
import type { ProcessOwner } from "../owner.js";
import type { WriteRunner } from "../write-runner.js";
import { DaemonLease, leaseIdOf, leaseProbe } from "./lease.js";
import { PgStatements } from "./pg-statements.js";
import { createPgWriteRunner, type PgWriteRunner } from "./pg-write-runner.js";
import { IMPORT_LOST_SQLSTATE, migratePostgres, STALE_LEAF_SQLSTATE } from "./schema.js";
import { indexedWords, indexEntry, indexSession, searchSessions } from "./search.js";
import { entryInsertOf } from "./entry-insert.js";
import { RowBatches, type EntryText } from "./row-batches.js";
import { logTraffic } from "./traffic-log.js";
import { PostgresError, type PostgresTraffic, SyncPostgres } from "./sync-postgres.js";

export interface PostgresEngineOptions {
  /** What the server shows in pg_stat_activity. */
  applicationName?: string;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
}

const ENTRIES_BY_SEQ = "SELECT seq, json FROM entries WHERE session_id = ? AND seq = ANY(CAST(? AS BIGINT[]))";
const EXISTING_IDS = "SELECT id FROM entries WHERE session_id = ? AND id = ANY(CAST(? AS TEXT[]))";
const UNCOUNTED_ENTRIES = `
  SELECT ${ENTRY_COLUMNS} FROM entries
  WHERE session_id = ? AND tokens IS NULL AND seq < ? ORDER BY seq DESC LIMIT ?`;

const postgresSearch: SearchIndex = { indexEntry, indexSession, searchSessions };
const EXPECT_IMPORT = "SELECT bc_expect_import(?, ?, ?)";
/** Search transactions of one session's writes running at once (writeSearchApart), each on a connection of its own. */
const SEARCH_WRITES_AT_ONCE = 2;
/** A miss of a one-round-trip append: the leaf moved, or an entry id or requestId is taken (unique indexes). */
const MISSES = new Set([STALE_LEAF_SQLSTATE, "23505"]);

export class PostgresEngine implements StoreEngine {
  readonly kind = "postgres";
  readonly sql: PgStatements;
  readonly writer: WriteRunner;
  readonly search: SearchIndex;
  private readonly batches: RowBatches;
  readonly owners: StoreOwners;
  readonly leafExpectations: LeafExpectations;
  readonly writeAsync: <T>(work: () => T, lockKey: string, options?: WriteAsyncOptions) => Promise<T>;
  /** Search rows being written apart (`searchApart`), by session: what `searchWritten` waits for. */
  private readonly searchWrites = new Map<string, Promise<void>[]>();
  private open = true;
  private lease: DaemonLease;
  /** Every lease this daemon held: what it started under an earlier one is still its own. */
  private readonly leaseIds = new Set<number>();

  private constructor(
    readonly location: string,
    private readonly db: SyncPostgres,
  ) {
    this.sql = new PgStatements(db);
    this.batches = new RowBatches(db);
    this.search = {
      ...postgresSearch,
      // Inside a transaction the search row joins the transaction's multi-row insert.
      indexEntry: (sql, row, entry) => {
        if (!db.inTransaction) return indexEntry(sql, row, entry);
        const words = indexedWords(entry);
        if (words !== undefined) this.batches.indexText(row.sessionId, row.id, words);
      },
    };
    const writer: PgWriteRunner = createPgWriteRunner(db, (sessionId) => this.batches.lockSession(sessionId));
    this.writer = writer;
    this.lease = this.takeLease();
    const probe = leaseProbe(db);
    this.leafExpectations = {
      get usable() {
        return !db.inTransaction;
      },
      // Sent with the append's entries, in the one statement that writes them (row-batches.ts).
      expect: (sessionId, leaf) => this.batches.expectLeaf(sessionId, leaf),
      isMiss: (error) => error instanceof PostgresError && MISSES.has(error.code),
    };
    this.writeAsync = <T>(work: () => T, lockKey: string, options?: WriteAsyncOptions): Promise<T> => {
      const written = options?.searchApart ? this.writeSearchApart(writer, work, lockKey) : writer.runAsync(work, lockKey);
      return written.catch((error: unknown) => {
        if (error instanceof PostgresError && error.code === IMPORT_LOST_SQLSTATE) {
          throw new Error(`session "${lockKey}" disappeared during its import`, { cause: error });
        }
        throw error;
      });
    };
    this.owners = {
      current: () => this.currentLease().owner,
      isSelf: (owner: ProcessOwner) => {
        const id = leaseIdOf(owner);
        return id !== undefined && this.leaseIds.has(id);
      },
      isAlive: (owner: ProcessOwner) => probe.isAlive!(owner),
    };
  }

  /**
   * Connects (a wrong URL or a server that is down fails here), brings the schema up to date
   * (several daemons may do it at once: schema.ts serialises them) and takes this daemon's lease.
   * @param display the URL with its password redacted, for messages.
   */
  static open(url: string, display: string, options: PostgresEngineOptions = {}): PostgresEngine {
    const db = SyncPostgres.open(url, options);
    try {
      migratePostgres(db);
      return new PostgresEngine(display, db);
    } catch (error) {
      void db.close();
      throw error;
    }
  }

  private takeLease(): DaemonLease {
    const lease = DaemonLease.acquire(this.db, {
      onLost: () => log("warn", `lost the connection holding this daemon's lease on ${this.location}: other daemons now take its jobs for abandoned; a new lease is taken for what it starts next`),
    });
    this.leaseIds.add(lease.id);
    return lease;
  }

  /** The lease, taken again when its connection was lost (what ran under the old one is reclaimed by others). */
  private currentLease(): DaemonLease {
    if (this.lease.lost && this.open) this.lease = this.takeLease();
    return this.lease;
  }

  /**
   * The write with its search rows kept back, then written in a transaction of their own on
   * another connection once it has committed: the server computes one batch's search vectors
   * (most of what an import costs it) while the next batch is written. For a session nobody
   * sees yet (a fresh import): `searchWritten` is awaited before it becomes visible. Up to
   * SEARCH_WRITES_AT_ONCE search transactions of a session run at once (computing the vectors
   * takes the server longer than writing the entries: one at a time, they set the import's pace),
   * and a write counts as done only once the search rows of the write SEARCH_WRITES_AT_ONCE + 1
   * before it are: the rows waiting to be indexed stay few.
   */
  private writeSearchApart<T>(writer: PgWriteRunner, work: () => T, lockKey: string): Promise<T> {
    let texts: EntryText[] = [];
    const written = writer.runAsync(() => {
      this.batches.holdTexts = true;
      try {
        const result = work();
        texts = this.batches.takeTexts();
        return result;
      } finally {
        this.batches.holdTexts = false;
      }
    }, lockKey);
    let pending = this.searchWrites.get(lockKey);
    if (!pending) this.searchWrites.set(lockKey, (pending = []));
    const before = pending.at(-SEARCH_WRITES_AT_ONCE);
    const indexed = written.then(
      async () => {
        await before?.catch(() => {});
        if (texts.length > 0) await this.sendSearchRows(texts);
      },
      () => undefined, // the write failed: its caller hears it, nothing to index
    );
    indexed.catch(() => {}); // heard by searchWritten; unheard if the import failed first
    pending.push(indexed);
    const farBefore = pending.at(-(SEARCH_WRITES_AT_ONCE + 2));
    if (!farBefore) return written;
    return written.then(async (result) => {
      await farBefore.catch(() => {});
      return result;
    });
  }

  /** The search rows in a write transaction of their own, committed on the event loop. */
  private sendSearchRows(texts: readonly EntryText[]): Promise<void> {
    // Called from a promise's callback: no transaction of this thread is open then.
    this.db.begin("write");
    try {
      this.batches.sendTexts(texts);
    } catch (error) {
      this.db.rollback();
      throw error;
    }
    return this.db.commitAsync();
  }

  readonly expectImport = (sessionId: string, owner: ProcessOwner | undefined): void => {
    this.sql.get(EXPECT_IMPORT).run(sessionId, owner?.pid ?? null, owner?.start ?? null);
  };

  readonly searchWritten = async (sessionId: string): Promise<void> => {
    const pending = this.searchWrites.get(sessionId);
    if (!pending) return;
    this.searchWrites.delete(sessionId);
    // Every one settles (none is left running); the first failure is the caller's.
    const outcomes = await Promise.allSettled(pending);
    const failed = outcomes.find((outcome) => outcome.status === "rejected");
    if (failed) throw failed.reason;
  };

  get isOpen(): boolean {
    return this.open;
  }

  write<T>(work: () => T, lockKey?: string): T {
    return this.writer(work, lockKey);
  }

  noteWrite(): void {
    // Nothing to keep in step: the server checkpoints its own WAL.
  }

  /** Statements sent and round trips waited for since the engine opened (the debug log's measure). */
  get traffic(): PostgresTraffic {
    return this.db.traffic;
  }

  /** REPEATABLE READ READ ONLY: every statement of `work` sees one snapshot. */
  read<T>(work: () => T): T {
    if (this.db.inTransaction) return work();
    const before = logTraffic.start(this.db);
    this.db.begin("read");
    try {
      const result = work();
      this.db.release();
      logTraffic.end(this.db, before, "read");
      return result;
    } catch (error) {
      if (this.db.inTransaction) {
        try {
          this.db.rollback();
        } catch {
          // Connection lost: the transaction is over anyway.
        }
      }
      throw error;
    }
  }

  /**
   * Inside a transaction the row joins the transaction's multi-row insert (row-batches.ts); the
   * statement is EntryWriter's, whose named parameters are the entry's columns.
   */
  insertReturningSeq(insertSql: string, params: Record<string, unknown>): { readonly seq: number } {
    if (this.db.inTransaction) return this.batches.insertEntry(entryInsertOf(params));
    return { seq: this.sql.get<number>(`${insertSql} RETURNING seq`).pluck().get(params)! };
  }

  /** Entries are buffered only inside a transaction (insertReturningSeq): without them, false. */
  tallyWithEntries(sessionId: string, tally: Readonly<SessionTally>): boolean {
    return this.batches.tallyWithEntries(sessionId, tally);
  }

  /** The same rule as the tally's. */
  requestResultWithEntries(row: RequestResultRow): boolean {
    return this.batches.requestResultWithEntries(row);
  }

  entryJsonBySeq(sessionId: string, seqs: readonly number[]): { seq: number; json: string }[] {
    return this.sql.get<{ seq: number; json: string }>(ENTRIES_BY_SEQ).all(sessionId, [...seqs]);
  }

  existingEntryIds(sessionId: string, ids: readonly string[]): Set<string> {
    if (ids.length === 0) return new Set();
    return new Set(this.sql.get<string>(EXISTING_IDS).pluck().all(sessionId, [...ids]));
  }

  uncountedEntries(sessionId: string, beforeSeq: number, limit: number): EntryRow[] {
    return this.sql.get<EntryRow>(UNCOUNTED_ENTRIES).all(sessionId, beforeSeq, limit);
  }

  /** Ends the lease (what this daemon owned is abandoned at once, for others to reclaim) and the connections. */
  async close(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    try {
      this.lease.release();
    } catch {
      // The server is gone: the lease ended with the connection that held its lock.
    }
    await this.db.close();
  }
}
