import { describe, expect, it } from "vitest";
import { DeferredWork, emptyWriteLockStats, LOCK_WAIT_BUCKETS_MS, recordLockWait } from "./write-runner.js";

/** Runs a piece as a savepoint would: its own work, with a throw reaching the caller. */
const inSavepoint = (work: () => void): void => work();

describe("DeferredWork", () => {
  it("runs the pending pieces in order and reports each once its transaction committed", () => {
    const deferred = new DeferredWork();
    const ran: string[] = [];
    const done: [string, boolean][] = [];
    deferred.add(() => ran.push("a"), (written) => done.push(["a", written]));
    deferred.add(() => ran.push("b"), (written) => done.push(["b", written]));
    expect(deferred.hasAny).toBe(true);
    const batch = deferred.runAll(inSavepoint);
    expect(ran).toEqual(["a", "b"]);
    expect(deferred.hasAny).toBe(false);
    expect(done).toEqual([]); // not before the commit
    deferred.settle(batch, true);
    expect(done).toEqual([["a", true], ["b", true]]);
  });

  it("reports a piece that threw as not written, without stopping the others", () => {
    const deferred = new DeferredWork();
    const done: [string, boolean][] = [];
    deferred.add(() => {
      throw new Error("count failed");
    }, (written) => done.push(["bad", written]));
    deferred.add(() => undefined, (written) => done.push(["good", written]));
    deferred.settle(deferred.runAll(inSavepoint), true);
    expect(done).toEqual([["bad", false], ["good", true]]);
    expect(deferred.hasAny).toBe(false);
  });

  it("queues again, ahead of newer work, what ran in a transaction that was rolled back", () => {
    const deferred = new DeferredWork();
    const ran: string[] = [];
    const done: [string, boolean][] = [];
    deferred.add(() => ran.push("old"), (written) => done.push(["old", written]));
    deferred.add(() => {
      throw new Error("broken");
    }, (written) => done.push(["broken", written]));
    const batch = deferred.runAll(inSavepoint);
    deferred.add(() => ran.push("new"));
    deferred.settle(batch, false);
    // The piece that threw is settled now; the one undone by the rollback waits for the next run.
    expect(done).toEqual([["broken", false]]);
    deferred.settle(deferred.runAll(inSavepoint), true);
    expect(ran).toEqual(["old", "old", "new"]);
    expect(done).toEqual([["broken", false], ["old", true]]);
  });
});

describe("recordLockWait", () => {
  it("counts transactions, contended ones, the histogram bucket and the longest wait", () => {
    const stats = emptyWriteLockStats();
    recordLockWait(stats, 0.05, false);
    recordLockWait(stats, 3, true);
    recordLockWait(stats, 5000, true);
    expect(stats.transactions).toBe(3);
    expect(stats.contended).toBe(2);
    expect(stats.waitHistogram).toHaveLength(LOCK_WAIT_BUCKETS_MS.length + 1);
    expect(stats.waitHistogram[0]).toBe(1); // ≤ 0.1 ms
    expect(stats.waitHistogram[2]).toBe(1); // ≤ 5 ms
    expect(stats.waitHistogram.at(-1)).toBe(1); // beyond the last bound
    expect(stats.longestWaitMs).toBe(5000);
  });
});
