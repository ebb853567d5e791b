/**
 * Write transactions on PostgreSQL (decision 4 in docs/design.md; docs/storage.md). The store's
 * logic is the same as on SQLite; what makes it safe across daemons is here:
 *
 * - A write transaction (READ COMMITTED) takes `pg_advisory_xact_lock` on the session it names
 *   (`lockKey`) before its work runs (sent with its first statement: RowBatches.lockSession puts
 *   it in the call that writes entries when that comes first), so writers of one session run one
 *   at a time, across hosts, and each statement after the lock sees every commit made before it:
 *   an append reads the leaf another daemon just moved, a conditional leaf move compares with the
 *   current leaf, a requestId retried on another daemon finds the first one's stored result.
 *   Writers of different sessions do not wait for each other (SQLite has one writer at a time).
 *   A nested write that names another session takes that session's lock too, inside the same
 *   transaction.
 * - Nested writes (and each piece of deferred work) run in a savepoint, as better-sqlite3's nested
 *   transactions do, so one that throws is undone on its own.
 * - A transaction that met a deadlock (40P01) or a serialization failure (40001) was rolled back
 *   whole by the server: it is run again from the start, a few times. That is safe because the
 *   work only reads and writes the database (and values local to it) and the server undid all of
 *   it; deferred work that ran in it is queued again (the same as after any rollback).
 */
import { PostgresError, type SyncPostgres } from "./sync-postgres.js";
import { DeferredWork, emptyWriteLockStats, recordLockWait, type DeferredBatch, type WriteRunner } from "../write-runner.js";
import { logTraffic } from "./traffic-log.js";

/** Runs of a transaction the server rolled back for a deadlock or a serialization failure. */
const ATTEMPTS = 5;
const RETRYABLE = new Set(["40P01", "40001"]);

export function isRetryable(error: unknown): boolean {
  return error instanceof PostgresError && RETRYABLE.has(error.code);
}

/** The engine's writer, and the same write with a commit the thread does not block for. */
export interface PgWriteRunner extends WriteRunner {
  /**
   * `work` in a write transaction whose COMMIT is awaited on the event loop (SyncPostgres.commitAsync):
   * for work that only sends (the one-round-trip append), so the thread blocks for nothing and
   * serves other requests meanwhile. Deferred work rides along, sent too. Inside an open
   * transaction it is the ordinary blocking write. A transaction the server rolled back for a
   * deadlock or a serialization failure is run again, as the ordinary one is; one that failed
   * with deferred work in it is made again the blocking way (a piece's failure is then its own).
   */
  runAsync<T>(work: () => T, lockKey: string): Promise<T>;
}

/** The runner's state and steps: the sessions the open transaction locked, its savepoints, the deferred work. */
class PgWrites {
  readonly stats = emptyWriteLockStats();
  readonly deferred = new DeferredWork();
  /** Sessions locked by the open transaction (none when no transaction is open). */
  private locked = new Set<string>();
  private savepoints = 0;

  constructor(
    private readonly db: SyncPostgres,
    private readonly lockSession: (key: string) => void,
  ) {}

  // A lock taken at once still needs a round trip: a wait longer than 1 ms counts as contended.
  private record(waitedMs: number): void {
    recordLockWait(this.stats, waitedMs, waitedMs > 1);
  }

  private lock(key: string | undefined): number {
    if (key === undefined || this.locked.has(key)) return 0;
    // Pipelined: the wait for the lock is part of the transaction's next answer, not measured apart.
    this.lockSession(key);
    this.locked.add(key);
    return 0;
  }

  private inSavepoint<T>(work: () => T): T {
    const db = this.db;
    const name = `bc_sp${++this.savepoints}`;
    db.send(`SAVEPOINT ${name}`);
    try {
      const result = work();
      // Waited for: a failure of what the work sent is thrown here, and undone below on its own.
      db.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      if (db.inTransaction) {
        try {
          db.send(`ROLLBACK TO SAVEPOINT ${name}`);
          db.query(`RELEASE SAVEPOINT ${name}`);
        } catch {
          // The transaction itself is broken (connection lost): the caller's rollback ends it.
        }
      }
      throw error;
    } finally {
      this.savepoints--;
    }
  }

  /**
   * A deferred piece in a savepoint, nothing waited for: one that throws here is undone on its
   * own, as in `inSavepoint`; one the server fails fails the whole transaction (runAsync then
   * makes it again the blocking way, where each piece's failure is its own).
   */
  private sendInSavepoint(work: () => void): void {
    const db = this.db;
    const name = `bc_sp${++this.savepoints}`;
    db.send(`SAVEPOINT ${name}`);
    try {
      work();
    } catch (error) {
      db.send(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    } finally {
      db.send(`RELEASE SAVEPOINT ${name}`);
      this.savepoints--;
    }
  }

  /**
   * Begins, takes the session's lock, runs the deferred work (each piece through `savepoint`) and
   * `work`, then `end` (the commit). A failure rolls back and gives the deferred pieces back.
   */
  private transaction<T, R>(
    work: () => T,
    lockKey: string | undefined,
    savepoint: (piece: () => void) => void,
    end: (result: T, ran: DeferredBatch) => R,
    countDeferred: boolean,
  ): R {
    const db = this.db;
    db.begin("write");
    this.locked = new Set();
    let ran: DeferredBatch = [];
    try {
      this.record(this.lock(lockKey));
      ran = this.deferred.runAll(savepoint);
      if (countDeferred) this.stats.deferredAlong += ran.length;
      return end(work(), ran);
    } catch (error) {
      if (db.inTransaction) {
        try {
          db.rollback();
        } catch {
          // Connection lost: the server rolled the transaction back already.
        }
      }
      this.deferred.settle(ran, false);
      throw error;
    } finally {
      this.locked = new Set();
    }
  }

  private once<T>(work: () => T, lockKey: string | undefined, isFlush: boolean): T {
    const commit = (result: T, ran: DeferredBatch): T => {
      this.db.commit();
      this.deferred.settle(ran, true);
      return result;
    };
    return this.transaction(work, lockKey, (piece) => this.inSavepoint(piece), commit, !isFlush);
  }

  run<T>(work: () => T, lockKey: string | undefined, isFlush = false): T {
    const db = this.db;
    if (db.inTransaction) {
      this.lock(lockKey);
      return this.inSavepoint(work);
    }
    const before = logTraffic.start(db);
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          return this.once(work, lockKey, isFlush);
        } catch (error) {
          if (!isRetryable(error) || attempt >= ATTEMPTS) throw error;
        }
      }
    } finally {
      logTraffic.end(db, before, lockKey === undefined ? "write" : `write (session ${lockKey})`);
    }
  }

  /** One attempt: begins, sends (deferred work first), and sends the COMMIT; `committed` is its answer. */
  private sendAll<T>(work: () => T, lockKey: string): { result: T; committed: Promise<void>; ran: DeferredBatch } {
    const send = (piece: () => void): void => this.sendInSavepoint(piece);
    return this.transaction(work, lockKey, send, (result, ran) => ({ result, committed: this.db.commitAsync(), ran }), true);
  }

  async runAsync<T>(work: () => T, lockKey: string): Promise<T> {
    const db = this.db;
    if (db.inTransaction) return this.run(work, lockKey);
    for (let attempt = 1; ; attempt++) {
      const before = logTraffic.start(db);
      const { result, committed, ran } = this.sendAll(work, lockKey);
      // What this transaction sent, counted before others' interleave with its wait.
      const sent = logTraffic.sent(db, before);
      try {
        await committed;
        this.deferred.settle(ran, true);
        return result;
      } catch (error) {
        this.deferred.settle(ran, false);
        if (isRetryable(error) && attempt < ATTEMPTS) continue;
        // The failure may be a deferred piece's: made again with each piece's failure its own.
        if (ran.length > 0) return this.run(work, lockKey);
        throw error;
      } finally {
        logTraffic.end(db, sent, `write (session ${lockKey}), commit on the event loop`);
      }
    }
  }
}

/**
 * @param lockSession takes the session's write lock in the open transaction, before any statement
 *   of it that follows (RowBatches.lockSession).
 */
export function createPgWriteRunner(db: SyncPostgres, lockSession: (key: string) => void): PgWriteRunner {
  const writes = new PgWrites(db, lockSession);
  const { deferred, stats } = writes;
  const runner = (<T>(work: () => T, lockKey?: string): T => writes.run(work, lockKey)) as PgWriteRunner;
  Object.defineProperties(runner, {
    defer: {
      value: (work: () => void, onDone?: (written: boolean) => void): void => deferred.add(work, onDone),
    },
    hasDeferred: { get: () => deferred.hasAny },
    flushDeferred: {
      value: (): void => {
        if (deferred.hasAny) writes.run(() => undefined, undefined, true);
      },
    },
    stats: { get: () => stats },
    runAsync: { value: <T>(work: () => T, lockKey: string): Promise<T> => writes.runAsync(work, lockKey) },
  });
  return runner;
}
