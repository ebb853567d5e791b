/**
 * The serving daemon's background work waits for the start-up pause: the counting worker (which
 * loads the encoding, on its own thread) is warmed only once no request has been seen for
 * `STARTUP_QUIET_MS`, and the backfill's first batch waits for the same pause. A fake clock and a
 * fake counter: nothing here depends on how fast the machine is.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RequestActivity } from "./router.js";
import type { TokenCounter } from "../tokens/counter.js";
import { STARTUP_QUIET_MS, startBackgroundWork, stopBackgroundWork, type BackgroundWorkDaemon } from "./serve-background.js";

function fakeDaemon() {
  const counter = { options: { encoding: "o200k_base", estimator: "exact" }, warmUp: vi.fn(async () => {}) } as unknown as TokenCounter;
  const sessions = { startBackfill: vi.fn(), stopBackfill: vi.fn() };
  const daemon = { counter, sessions } as unknown as BackgroundWorkDaemon;
  return { daemon, counter, sessions };
}

describe("background work of a serving daemon", () => {
  let activity: RequestActivity;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "performance"] });
    // Made under the fake clock: it reads performance.now() when it is created.
    activity = new RequestActivity();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("warms the counting worker after the start-up pause, not while requests are in flight", async () => {
    const { daemon, counter } = fakeDaemon();
    startBackgroundWork(daemon, activity);
    activity.begin();
    await vi.advanceTimersByTimeAsync(STARTUP_QUIET_MS * 4);
    expect(counter.warmUp).not.toHaveBeenCalled();
    activity.end();
    await vi.advanceTimersByTimeAsync(STARTUP_QUIET_MS - 10);
    expect(counter.warmUp).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(20);
    expect(counter.warmUp).toHaveBeenCalledTimes(1);
    stopBackgroundWork(daemon);
  });

  it("starts the backfill, whose first batch waits for the same pause", async () => {
    const { daemon, sessions } = fakeDaemon();
    startBackgroundWork(daemon, activity);
    expect(sessions.startBackfill).toHaveBeenCalledTimes(1);
    const { whenIdle } = sessions.startBackfill.mock.calls[0]![0] as { whenIdle: () => Promise<void> };
    let ran = false;
    void whenIdle().then(() => (ran = true));
    await vi.advanceTimersByTimeAsync(STARTUP_QUIET_MS - 10);
    expect(ran).toBe(false);
    await vi.advanceTimersByTimeAsync(20);
    expect(ran).toBe(true);
    stopBackgroundWork(daemon);
    expect(sessions.stopBackfill).toHaveBeenCalledTimes(1);
  });
});
