/**
 * Taking SQLite's write lock when several daemon processes share one database.
 *
 * SQLite's own busy handler (busy_timeout) sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms
 * between attempts: a writer that loses the race a few times sleeps 25–100 ms while the lock it
 * waits for is held for about a millisecond. With four daemons appending, that made the p99 of an
 * append 36–58 ms and the worst up to seconds (a waiter that keeps losing keeps sleeping 100 ms).
 * Here `BEGIN IMMEDIATE` is tried without the busy handler and retried after short pauses (from
 * 0.1 ms, doubling up to 4 ms, with jitter so that waiters do not retry in step), until the busy
 * timeout has passed. Pauses much shorter than 1 ms were tried: on a machine with fewer cores
 * than writers, waking that often takes CPU from the process holding the lock. The transaction's work then
 * runs with the busy timeout back in place, inside the lock, so nothing else changes.
 *
 * The pause blocks the thread, as SQLite's busy handler did: better-sqlite3 is synchronous.
 */
import type { Database } from "better-sqlite3";

const FIRST_PAUSE_MS = 0.1;
const LONGEST_PAUSE_MS = 4;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Runs `work` (which may itself be a nested transaction) inside one IMMEDIATE transaction. */
export type WriteRunner = <T>(work: () => T) => T;

export function createWriteRunner(db: Database, busyTimeoutMs: number): WriteRunner {
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  const noWaiting = db.prepare("PRAGMA busy_timeout = 0");
  const waiting = db.prepare(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  // A savepoint inside the transaction begun here, so that `work` is undone on its own when it
  // throws inside a caller's larger transaction, as better-sqlite3's nested transactions are.
  const nested = db.transaction((work: () => unknown) => work());

  const acquire = (): void => {
    noWaiting.get();
    try {
      const deadline = performance.now() + busyTimeoutMs;
      let pause = FIRST_PAUSE_MS;
      for (;;) {
        try {
          begin.run();
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

  return <T>(work: () => T): T => {
    if (db.inTransaction) return nested(work) as T;
    acquire();
    try {
      const result = nested(work) as T;
      commit.run();
      return result;
    } catch (error) {
      if (db.inTransaction) rollback.run();
      throw error;
    }
  };
}
