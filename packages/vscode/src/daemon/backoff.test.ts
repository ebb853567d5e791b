import { describe, expect, it } from "vitest";
import { Backoff } from "./backoff.js";

describe("Backoff", () => {
  const options = { firstDelayMs: 500, maxDelayMs: 4000, resetAfterMs: 60_000, maxAttempts: 5 };

  it("waits longer after each quick death, up to a bound, then gives up", () => {
    const backoff = new Backoff(options);
    expect([1, 2, 3, 4, 5].map(() => backoff.next(100))).toEqual([500, 1000, 2000, 4000, 4000]);
    expect(backoff.next(100)).toBeUndefined();
    expect(backoff.failures).toBe(5);
  });

  it("starts counting afresh after a daemon that ran a while, or a restart the user asked for", () => {
    const backoff = new Backoff(options);
    backoff.next(10);
    backoff.next(10);
    expect(backoff.next(120_000)).toBe(500);
    backoff.next(10);
    backoff.reset();
    expect(backoff.next(10)).toBe(500);
  });
});
