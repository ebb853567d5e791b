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
 *
 * Polling alone stayed unfair. Timestamps taken in the bench client and in each of four daemons
 * (client and transport, handling before the lock, lock wait, the transaction) put the whole tail
 * in the lock wait: the appends above p99 (20–70 ms) had lost 10–20 polls in a row, each holder
 * keeping the lock for ~0.5 ms but four of them keeping it busy ~70 % of the time, so a waiter on
 * a 4 ms pause mostly found it retaken by a writer that came after it. Client, transport,
 * handling outside the lock and the commit were under 2 ms there; checkpoints did not show.
 * So when the runner has a writer gate (store/writer-gate.ts: a token in a named pipe that Linux
 * hands to waiting processes in turn), it takes the token before `BEGIN IMMEDIATE` and gives it
 * back after the transaction: writers of all the daemons queue in order in the kernel, and the
 * one released finds SQLite's lock free at its first try. With it the contention bench went from
 * p99 17–21 ms / max 60–77 ms to p99 8–9.5 ms / max 16–30 ms, for a median ~0.5 ms higher
 * (docs/storage.md). Handing the token over before COMMIT, to overlap the next writer's wake-up
 * with the commit, was tried and was slower. The gate is best effort; SQLite's lock stays the
 * exclusion and the polling above runs whenever the gate lets a writer in early or is not there.
 *
 * Work that may wait (`defer`: token counts computed after their entries were stored) rides along
 * with the next transaction instead of taking the lock again: with four daemons appending, taking
 * it twice per append (entry, then its count) doubled the time each writer queued for it. Each
 * piece of deferred work runs in a savepoint of its own, and a piece that throws is dropped (it
 * is logged by whoever deferred it) without touching the transaction it rode along with.
 *
 * The deferred work and the statistics are kept by store/write-runner.ts, shared with PostgreSQL.
 * `stats` counts the transactions begun and how long taking the lock waited, gate included (a
 * histogram the daemon logs at debug level on close, and tests read to count BEGINs), and the
 * gate's own counts.
 */
import type { Database } from "better-sqlite3";
import type { WriterGate } from "./writer-gate.js";
import { DeferredWork, emptyWriteLockStats, recordLockWait, type DeferredBatch, type WriteRunner } from "./write-runner.js";

const FIRST_PAUSE_MS = 0.1;
const LONGEST_PAUSE_MS = 4;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

export function createWriteRunner(db: Database, busyTimeoutMs: number, gate?: WriterGate): WriteRunner {
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

  /** Takes the gate's token, then SQLite's lock; on failure the token is given back. */
  const acquire = (): void => {
    const started = performance.now();
    noWaiting.get();
    try {
      const queued = gate?.enter() ?? false;
      const deadline = started + busyTimeoutMs;
      let pause = FIRST_PAUSE_MS;
      for (let retried = queued; ; retried = true) {
        try {
          begin.run();
          recordLockWait(stats, performance.now() - started, retried);
          return;
        } catch (error) {
          if ((error as { code?: string }).code !== "SQLITE_BUSY" || performance.now() >= deadline) throw error;
        }
        gate?.noteContention();
        Atomics.wait(sleeper, 0, 0, pause * (0.5 + Math.random()));
        pause = Math.min(LONGEST_PAUSE_MS, pause * 2);
      }
    } catch (error) {
      gate?.leave();
      throw error;
    } finally {
      waiting.get();
    }
  };

  const run = <T>(work: () => T, isFlush = false): T => {
    if (db.inTransaction) return nested(work) as T;
    acquire();
    let ran: DeferredBatch = [];
    let left = false;
    const leave = () => {
      left = true;
      gate?.leave();
    };
    try {
      gate?.dropExtraTokens();
      ran = deferred.runAll((piece) => nested(piece));
      if (!isFlush) stats.deferredAlong += ran.length;
      const result = nested(work) as T;
      commit.run();
      leave();
      deferred.settle(ran, true);
      return result;
    } catch (error) {
      if (db.inTransaction) rollback.run();
      if (!left) leave();
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
    stats: {
      get: () => {
        if (gate) stats.gate = gate.stats;
        return stats;
      },
    },
  });
  return runner;
}
