/**
 * The rent-or-buy rule for loading the encoding on the calling thread: the accounting with a
 * fake clock, then the exact counter's wiring (which counts are rent) with a real worker. No
 * encoding is loaded on this test's thread: the counter must keep using the worker throughout.
 */
import { SessionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import type { TokenCounter } from "./counter.js";
import { CountWorker } from "./count-worker.js";
import { isExactCountLoaded } from "./encodings.js";
import { useCounters } from "./fixtures/counters.js";
import { LoadRent } from "./load-rent.js";

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("LoadRent", () => {
  const make = (priceMs: number) => {
    const clock = { now: 0 };
    const rent = new LoadRent(() => priceMs, () => clock.now);
    let paidOff = false;
    void rent.whenPaidOff().then(() => {
      paidOff = true;
    });
    /** One count that waits `ms` for the worker. */
    const wait = (ms: number) => {
      rent.begin();
      clock.now += ms;
      rent.end();
    };
    return { clock, rent, wait, paidOff: () => paidOff };
  };

  it("pays off once the waits add up to the price, not before", async () => {
    const { rent, wait, paidOff } = make(400);
    for (let i = 0; i < 799; i++) wait(0.5);
    await settle();
    expect(rent.rentMs).toBeCloseTo(399.5);
    expect(paidOff()).toBe(false);
    wait(0.5);
    await settle();
    expect(paidOff()).toBe(true);
    // Later waits change nothing; a late caller learns it is paid off.
    wait(10);
    await expect(rent.whenPaidOff()).resolves.toBeUndefined();
  });

  it("counts time between waits as nothing: idle time is no rent", async () => {
    const { clock, rent, wait, paidOff } = make(400);
    for (let i = 0; i < 100; i++) {
      wait(1);
      clock.now += 1000;
    }
    await settle();
    expect(rent.rentMs).toBe(100);
    expect(paidOff()).toBe(false);
  });

  it("counts overlapping waits once: counts that share a round trip pay it together", async () => {
    const { clock, rent, paidOff } = make(10);
    rent.begin();
    clock.now += 2;
    rent.begin();
    rent.begin();
    clock.now += 3;
    rent.end();
    rent.end();
    clock.now += 1;
    rent.end();
    expect(rent.rentMs).toBe(6);
    await settle();
    expect(paidOff()).toBe(false);
  });

  it("asks for the price when it compares, so a better estimate counts", async () => {
    const clock = { now: 0 };
    let price = 1000;
    const rent = new LoadRent(() => price, () => clock.now);
    rent.begin();
    clock.now += 300;
    rent.end();
    price = 300;
    rent.begin();
    rent.end();
    let paidOff = false;
    void rent.whenPaidOff().then(() => (paidOff = true));
    await settle();
    expect(paidOff).toBe(true);
  });
});

describe("the exact counter's rent", () => {
  const make = useCounters();
  const watch = (counter: TokenCounter) => {
    let paidOff = false;
    void counter.whenCallingThreadLoadPaysOff!().then(() => {
      paidOff = true;
    });
    return () => paidOff;
  };

  it("is paid by small counts that wait for a ready worker, not by its start-up nor by large texts", async () => {
    // A price of 0: the first count that is rent pays it off, whatever the machine's speed.
    const counter = make({ encoding: "o200k_base", estimator: "exact" }, { syncMaxChars: 100, loadCostMs: 0 });
    const paidOff = watch(counter);
    // The first count waits for the worker to start and load its encoding: not rent.
    expect(await counter.countTextAsync("hello there")).toBeGreaterThan(0);
    await settle();
    expect(paidOff()).toBe(false);
    // Too long to be counted on this thread anyway: not rent.
    expect(await counter.countTextAsync("word ".repeat(100))).toBeGreaterThan(0);
    await settle();
    expect(paidOff()).toBe(false);
    // Background counts (backfills) are not either.
    const entry = SessionEntry.parse({
      id: "e1",
      parentId: null,
      timestamp: "2026-03-01T12:00:00.000Z",
      type: "message",
      message: { role: "user", content: "hi" },
    });
    expect(await counter.countEntriesInBackground!([entry])).toEqual([expect.any(Number)]);
    await settle();
    expect(paidOff()).toBe(false);

    expect(await counter.countTextAsync("hello again")).toBeGreaterThan(0);
    await settle();
    expect(paidOff()).toBe(true);
    // Deciding is the caller's business: nothing was loaded here.
    expect(isExactCountLoaded("o200k_base")).toBe(false);
  });

  it("needs many small counts at a realistic price", async () => {
    const counter = make({ encoding: "o200k_base", estimator: "exact" }, { loadCostMs: 60_000 });
    const paidOff = watch(counter);
    await counter.warmUp!();
    for (let i = 0; i < 20; i++) await counter.countTextAsync(`message ${i}`);
    await settle();
    expect(paidOff()).toBe(false);
  });

  it("is priced by how long the worker took to load its encoding", async () => {
    const worker = new CountWorker("o200k_base");
    try {
      expect(worker.ready).toBe(false);
      expect(worker.encodingLoadMs).toBeUndefined();
      await worker.warmUp();
      expect(worker.ready).toBe(true);
      expect(worker.encodingLoadMs).toBeGreaterThan(0);
    } finally {
      await worker.dispose();
    }
    expect(worker.ready).toBe(false);
  });

  it("does not exist with chars4, which never waits for anything", () => {
    const counter = make({ encoding: "o200k_base", estimator: "chars4" });
    expect(counter.whenCallingThreadLoadPaysOff).toBeUndefined();
    expect(counter.countEntriesNow!([{ type: "message", message: { role: "user", content: "abcdefgh" } }])).toEqual([2]);
  });
});
