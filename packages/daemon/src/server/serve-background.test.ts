/**
 * When the serving daemon loads the encoding on the main thread: after a second without requests,
 * or once the counter says the round trips have paid for the load — and then only between
 * requests. A fake clock (timers and `performance.now`) and a fake counter: nothing here depends
 * on how fast the machine is.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RequestActivity } from "./router.js";
import type { TokenCounter } from "../tokens/counter.js";
import {
  CALLING_THREAD_QUIET_MS,
  STARTUP_QUIET_MS,
  startBackgroundWork,
  stopBackgroundWork,
  type BackgroundWorkDaemon,
} from "./serve-background.js";

function fakeDaemon(options: { rent: boolean }) {
  let payOff = () => {};
  const paidOff = new Promise<void>((resolve) => {
    payOff = resolve;
  });
  const counter = {
    options: { encoding: "o200k_base", estimator: options.rent ? "exact" : "chars4" },
    warmUp: vi.fn(async () => {}),
    loadOnCallingThread: vi.fn(),
    ...(options.rent ? { whenCallingThreadLoadPaysOff: () => paidOff } : {}),
  } as unknown as TokenCounter;
  const sessions = { startBackfill: vi.fn(), stopBackfill: vi.fn() };
  const daemon = { counter, sessions } as unknown as BackgroundWorkDaemon;
  return { daemon, counter, payOff, load: counter.loadOnCallingThread as ReturnType<typeof vi.fn> };
}

describe("loading the encoding on the main thread", () => {
  let activity: RequestActivity;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "performance"] });
    // Made under the fake clock: it reads performance.now() when it is created.
    activity = new RequestActivity();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("happens after a second without requests", async () => {
    const { daemon, load, counter } = fakeDaemon({ rent: true });
    startBackgroundWork(daemon, activity);
    // A second after the last request (the start-up pause, shorter, has passed by then).
    await vi.advanceTimersByTimeAsync(CALLING_THREAD_QUIET_MS - 10);
    expect(counter.warmUp).toHaveBeenCalledTimes(1);
    expect(load).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(20);
    expect(load).toHaveBeenCalledTimes(1);
    stopBackgroundWork(daemon);
  });

  it("happens as soon as the round trips have paid for it, between requests, and only once", async () => {
    const { daemon, load, payOff, counter } = fakeDaemon({ rent: true });
    startBackgroundWork(daemon, activity);
    // A client that never pauses: a request is always in flight when the balance tips.
    activity.begin();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(load).not.toHaveBeenCalled();
    payOff();
    await vi.advanceTimersByTimeAsync(100);
    expect(load).not.toHaveBeenCalled();
    // The reply goes out; the next request has not come in yet.
    activity.end();
    await vi.advanceTimersByTimeAsync(5);
    expect(load).toHaveBeenCalledTimes(1);
    // Long before the pause rule would have done it (the start-up pause has not even happened).
    expect(counter.warmUp).not.toHaveBeenCalled();
    // The pause rule does not load it a second time.
    await vi.advanceTimersByTimeAsync(STARTUP_QUIET_MS + CALLING_THREAD_QUIET_MS + 100);
    expect(load).toHaveBeenCalledTimes(1);
    stopBackgroundWork(daemon);
  });

  it("waits while requests keep coming and are in flight whenever it looks", async () => {
    const { daemon, load, payOff } = fakeDaemon({ rent: true });
    startBackgroundWork(daemon, activity);
    activity.begin();
    payOff();
    // Requests overlap (several clients): there is never a moment without one in flight.
    for (let i = 0; i < 50; i++) {
      activity.begin();
      activity.end();
      await vi.advanceTimersByTimeAsync(3);
    }
    expect(load).not.toHaveBeenCalled();
    activity.end();
    await vi.advanceTimersByTimeAsync(5);
    expect(load).toHaveBeenCalledTimes(1);
    stopBackgroundWork(daemon);
  });

  it("with a counter that never waits for a worker (chars4), only the pause rule is left", async () => {
    const { daemon, load } = fakeDaemon({ rent: false });
    startBackgroundWork(daemon, activity);
    activity.begin();
    activity.end();
    await vi.advanceTimersByTimeAsync(CALLING_THREAD_QUIET_MS - 10);
    expect(load).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(20);
    expect(load).toHaveBeenCalledTimes(1);
    stopBackgroundWork(daemon);
  });
});
