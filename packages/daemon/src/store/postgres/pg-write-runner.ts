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

/**
 * @param lockSession takes the session's write lock in the open transaction, before any statement
 *   of it that follows (RowBatches.lockSession).
 */
export function createPgWriteRunner(db: SyncPostgres, lockSession: (key: string) => void): PgWriteRunner {
  const stats = emptyWriteLockStats();
  const deferred = new DeferredWork();
  /** Sessions locked by the open transaction (none when no transaction is open). */
  let locked = new Set<string>();
  let savepoints = 0;

  // A lock taken at once still needs a round trip: a wait longer than 1 ms counts as contended.
  const record = (waitedMs: number): void => recordLockWait(stats, waitedMs, waitedMs > 1);

  const lock = (key: string | undefined): number => {
    if (key === undefined || locked.has(key)) return 0;
    // Pipelined: the wait for the lock is part of the transaction's next answer, not measured apart.
    lockSession(key);
    locked.add(key);
    return 0;
  };

  const inSavepoint = <T>(work: () => T): T => {
    const name = `bc_sp${++savepoints}`;
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
      savepoints--;
    }
  };

  /**
   * Begins, takes the session's lock, runs the deferred work (each piece through `savepoint`) and
   * `work`, then `end` (the commit). A failure rolls back and gives the deferred pieces back.
   */
  const transaction = <T, R>(
    work: () => T,
    lockKey: string | undefined,
    savepoint: (piece: () => void) => void,
    end: (result: T, ran: DeferredBatch) => R,
    countDeferred: boolean,
  ): R => {
    db.begin("write");
    locked = new Set();
    let ran: DeferredBatch = [];
    try {
      record(lock(lockKey));
      ran = deferred.runAll(savepoint);
      if (countDeferred) stats.deferredAlong += ran.length;
      return end(work(), ran);
    } catch (error) {
      if (db.inTransaction) {
        try {
          db.rollback();
        } catch {
          // Connection lost: the server rolled the transaction back already.
        }
      }
      deferred.settle(ran, false);
      throw error;
    } finally {
      locked = new Set();
    }
  };

  const once = <T>(work: () => T, lockKey: string | undefined, isFlush: boolean): T =>
    transaction(
      work,
      lockKey,
      inSavepoint,
      (result, ran) => {
        db.commit();
        deferred.settle(ran, true);
        return result;
      },
      !isFlush,
    );

  const run = <T>(work: () => T, lockKey: string | undefined, isFlush = false): T => {
    if (db.inTransaction) {
      lock(lockKey);
      return inSavepoint(work);
    }
    const before = logTraffic.start(db);
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          return once(work, lockKey, isFlush);
        } catch (error) {
          if (!isRetryable(error) || attempt >= ATTEMPTS) throw error;
        }
      }
    } finally {
      logTraffic.end(db, before, lockKey === undefined ? "write" : `write (session ${lockKey})`);
    }
  };

  /**
   * A deferred piece in a savepoint, nothing waited for: one that throws here is undone on its
   * own, as in `inSavepoint`; one the server fails fails the whole transaction (runAsync then
   * makes it again the blocking way, where each piece's failure is its own).
   */
  const sendInSavepoint = (work: () => void): void => {
    const name = `bc_sp${++savepoints}`;
    db.send(`SAVEPOINT ${name}`);
    try {
      work();
    } catch (error) {
      db.send(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    } finally {
      db.send(`RELEASE SAVEPOINT ${name}`);
      savepoints--;
    }
  };

  /** One attempt: begins, sends (deferred work first), and sends the COMMIT; `committed` is its answer. */
  const sendAll = <T>(work: () => T, lockKey: string): { result: T; committed: Promise<void>; ran: DeferredBatch } =>
    transaction(work, lockKey, sendInSavepoint, (result, ran) => ({ result, committed: db.commitAsync(), ran }), true);

  const runAsync = async <T>(work: () => T, lockKey: string): Promise<T> => {
    if (db.inTransaction) return run(work, lockKey);
    for (let attempt = 1; ; attempt++) {
      const before = logTraffic.start(db);
      const { result, committed, ran } = sendAll(work, lockKey);
      // What this transaction sent, counted before others' interleave with its wait.
      const sent = logTraffic.sent(db, before);
      try {
        await committed;
        deferred.settle(ran, true);
        return result;
      } catch (error) {
        deferred.settle(ran, false);
        if (isRetryable(error) && attempt < ATTEMPTS) continue;
        // The failure may be a deferred piece's: made again with each piece's failure its own.
        if (ran.length > 0) return run(work, lockKey);
        throw error;
      } finally {
        logTraffic.end(db, sent, `write (session ${lockKey}), commit on the event loop`);
      }
    }
  };

  const runner = (<T>(work: () => T, lockKey?: string): T => run(work, lockKey)) as PgWriteRunner;
  Object.defineProperties(runner, {
    defer: {
      value: (work: () => void, onDone?: (written: boolean) => void): void => deferred.add(work, onDone),
    },
    hasDeferred: { get: () => deferred.hasAny },
    flushDeferred: {
      value: (): void => {
        if (deferred.hasAny) run(() => undefined, undefined, true);
      },
    },
    stats: { get: () => stats },
    runAsync: { value: runAsync },
  });
  return runner;
}
