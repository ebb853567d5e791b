/**
 * What the two engines' write runners share (store/sqlite/write-lock.ts for SQLite,
 * store/postgres/pg-write-runner.ts for PostgreSQL): the lock-wait statistics and the deferred
 * work that rides along with the next transaction. How each takes its lock and opens its
 * savepoints stays with the engine.
 */

/** Upper bounds (ms) of the lock-wait histogram's buckets; the last bucket holds the rest. */
export const LOCK_WAIT_BUCKETS_MS = [0.1, 1, 5, 15, 50, 250, 1000] as const;

export interface WriteLockStats {
  /** Transactions begun (one BEGIN each; nested ones are savepoints and not counted). */
  transactions: number;
  /** Of those, how many waited for another writer (another connection). */
  contended: number;
  /** Counts of lock waits per bucket of `LOCK_WAIT_BUCKETS_MS`, plus one for longer waits. */
  waitHistogram: number[];
  /** The longest wait for the lock, in ms. */
  longestWaitMs: number;
  /** Deferred pieces of work that rode along with a transaction begun for something else. */
  deferredAlong: number;
}

/**
 * Runs `work` (which may itself be a nested transaction) inside one write transaction. `lockKey`
 * names the session written (store/store-engine.ts): PostgreSQL locks that session; SQLite's IMMEDIATE
 * transaction serialises every writer and ignores it.
 */
export interface WriteRunner {
  <T>(work: () => T, lockKey?: string): T;
  /**
   * Work that need not be written now: it runs at the start of the next transaction this runner
   * begins, or at `flushDeferred`. `onDone` is called once it is committed (true) or when it
   * threw (false); if the transaction it ran in is rolled back, it waits for the next one.
   */
  defer(work: () => void, onDone?: (written: boolean) => void): void;
  /** Whether deferred work is waiting for a transaction. */
  readonly hasDeferred: boolean;
  /** Runs the deferred work now, in a transaction of its own; nothing when there is none. */
  flushDeferred(): void;
  readonly stats: Readonly<WriteLockStats>;
}

export function emptyWriteLockStats(): WriteLockStats {
  return {
    transactions: 0,
    contended: 0,
    waitHistogram: LOCK_WAIT_BUCKETS_MS.map(() => 0).concat(0),
    longestWaitMs: 0,
    deferredAlong: 0,
  };
}

/** Counts one transaction begun after waiting `waitedMs` for its lock. */
export function recordLockWait(stats: WriteLockStats, waitedMs: number, contended: boolean): void {
  stats.transactions++;
  if (contended) stats.contended++;
  const bucket = LOCK_WAIT_BUCKETS_MS.findIndex((bound) => waitedMs <= bound);
  stats.waitHistogram[bucket < 0 ? LOCK_WAIT_BUCKETS_MS.length : bucket]!++;
  stats.longestWaitMs = Math.max(stats.longestWaitMs, waitedMs);
}

interface DeferredPiece {
  work: () => void;
  onDone: ((written: boolean) => void) | undefined;
}

/** What ran of the deferred work in one transaction, to settle once it committed or rolled back. */
export type DeferredBatch = readonly { piece: DeferredPiece; written: boolean }[];

/**
 * Work that need not be written now (a token count computed after its entry was stored): it runs
 * at the start of the next transaction, each piece in a savepoint of its own so that one that
 * throws is dropped without touching the transaction it rode along with.
 */
export class DeferredWork {
  private pending: DeferredPiece[] = [];

  add(work: () => void, onDone?: (written: boolean) => void): void {
    this.pending.push({ work, onDone });
  }

  get hasAny(): boolean {
    return this.pending.length > 0;
  }

  /** Runs every pending piece inside the open transaction, each through `inSavepoint`. */
  runAll(inSavepoint: (work: () => void) => void): DeferredBatch {
    const pieces = this.pending;
    this.pending = [];
    return pieces.map((piece) => {
      try {
        inSavepoint(piece.work);
        return { piece, written: true };
      } catch {
        return { piece, written: false };
      }
    });
  }

  /**
   * After the commit, or the rollback: a piece that threw is reported failed; one that ran in a
   * transaction that was rolled back (its work was undone with the rest) waits for the next one.
   */
  settle(batch: DeferredBatch, committed: boolean): void {
    if (!committed) this.pending.unshift(...batch.filter((outcome) => outcome.written).map((outcome) => outcome.piece));
    for (const { piece, written } of batch) if (committed || !written) piece.onDone?.(written);
  }
}
