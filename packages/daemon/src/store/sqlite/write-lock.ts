/**
 * Taking SQLite's write lock when several daemon processes share one database.
 *
 * SQLite's own busy handler (busy_timeout) sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms
 * between attempts: a writer that loses the race a few times sleeps far longer than the lock it
 * waits for is held, and one that keeps losing keeps sleeping 100 ms.
 * Here `BEGIN IMMEDIATE` is tried without the busy handler and retried after short pauses (from
 * 0.1 ms, doubling up to 4 ms, with jitter so that waiters do not retry in step), until the busy
 * timeout has passed. Much shorter pauses were tried: on a machine with fewer cores than writers,
 * waking that often takes CPU from the process holding the lock. The transaction's work then runs
 * with the busy timeout back in place, inside the lock, so nothing else changes.
 *
 * The pause blocks the thread, as SQLite's busy handler did: better-sqlite3 is synchronous.
 *
 * Polling is not a queue: with several processes writing flat out, a waiter may lose the race to
 * writers that came after it. Many writers are served by one `serve --socket` daemon instead,
 * whose writes never wait for each other's process (docs/design.md, "Mechanisms kept and dropped").
 *
 * Work that may wait (`defer`: token counts computed after their entries were stored) rides along
 * with the next transaction instead of taking the lock again: with four daemons appending, taking
 * it twice per append (entry, then its count) doubled the time each writer queued for it. Each
 * piece of deferred work runs in a savepoint of its own, and a piece that throws is dropped (it
 * is logged by whoever deferred it) without touching the transaction it rode along with.
 *
 * The deferred work and the statistics are kept by store/write-runner.ts, shared with PostgreSQL.
 * `stats` counts the transactions begun and how long taking the lock waited (a histogram the
 * daemon logs at debug level on close, and tests read to count BEGINs).
 */
import type { Database } from "better-sqlite3";
import { DeferredWork, emptyWriteLockStats, recordLockWait, type DeferredBatch, type WriteRunner } from "../write-runner.js";

const FIRST_PAUSE_MS = 0.1;
const LONGEST_PAUSE_MS = 4;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

export function createWriteRunner(db: Database, busyTimeoutMs: number): WriteRunner {
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  const noWaiting = db.prepare("PRAGMA busy_timeout = 0");
  const waiting = db.prepare(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  // A savepoint inside the transaction begun here, so that `work` is undone on its own when it
  // throws inside a caller's larger transaction, as better-sqlite3's nested transactions are.
  const nested = db.transaction((work: () => unknown) => work());
  const stats = emptyWriteLockStats();
  const deferred = new DeferredWork();

  const acquire = (): void => {
    noWaiting.get();
    try {
      const started = performance.now();
      const deadline = started + busyTimeoutMs;
      let pause = FIRST_PAUSE_MS;
      for (let retried = false; ; retried = true) {
        try {
          begin.run();
          recordLockWait(stats, performance.now() - started, retried);
          return;
        } catch (error) {
          if ((error as { code?: string }).code !== "SQLITE_BUSY" || performance.now() >= deadline) throw error;
        }
        Atomics.wait(sleeper, 0, 0, pause * (0.5 + Math.random()));
        pause = Math.min(LONGEST_PAUSE_MS, pause * 2);
      }
    } finally {
      waiting.get();
    }
  };

  const run = <T>(work: () => T, isFlush = false): T => {
    if (db.inTransaction) return nested(work) as T;
    acquire();
    let ran: DeferredBatch = [];
    try {
      ran = deferred.runAll((piece) => nested(piece));
      if (!isFlush) stats.deferredAlong += ran.length;
      const result = nested(work) as T;
      commit.run();
      deferred.settle(ran, true);
      return result;
    } catch (error) {
      if (db.inTransaction) rollback.run();
      deferred.settle(ran, false);
      throw error;
    }
  };

  const runner = (<T>(work: () => T): T => run(work)) as WriteRunner;
  Object.defineProperties(runner, {
    defer: {
      value: (work: () => void, onDone?: (written: boolean) => void): void => deferred.add(work, onDone),
    },
    hasDeferred: { get: () => deferred.hasAny },
    flushDeferred: {
      value: (): void => {
        if (deferred.hasAny) run(() => undefined, true);
      },
    },
    stats: { get: () => stats },
  });
  return runner;
}
