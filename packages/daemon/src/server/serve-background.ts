/**
 * What a serving daemon does in the gaps between requests, never in their way: warming the token
 * counter, filling in token counts that imports left out, and loading the encoding on the main
 * thread so that small appends are counted on the spot instead of in a worker round trip.
 *
 * The encoding is loaded on the main thread after a real pause (a second without requests), or
 * as soon as appends have waited for worker counts about as long as the load costs, whichever
 * comes first. The second rule is rent or buy (tokens/load-rent.ts): a client that never pauses
 * (a burst, an import tool, a bench) would otherwise pay the round trip on every append, forever;
 * with it, it pays at most twice what the best choice in hindsight would have cost. Either way the
 * load (a ~0.4 s stall) happens between requests: after the reply of the append that tipped the
 * balance has gone out, while no request is in flight.
 *
 * None of it happens before the `initialize` reply or while requests are being served: a client
 * that starts the daemon and immediately asks for a context gets it without competing with any
 * of this.
 */
import type { Daemon } from "../daemon.js";
import { log } from "../log.js";
import type { RequestActivity } from "./router.js";

/** What the background work uses of the daemon (tests pass fakes). */
export interface BackgroundWorkDaemon {
  counter: Daemon["counter"];
  sessions: Pick<Daemon["sessions"], "startBackfill" | "stopBackfill">;
}

/** What it needs to know about the server's requests: when none is in flight, and since when. */
export type Activity = Pick<RequestActivity, "whenIdle" | "isIdle">;

/**
 * Quiet time after `initialize` before any of it starts. A client usually sends its first requests
 * right after the reply (a context/build, say), but not always within a few milliseconds of it,
 * and a worker starting or a backfill batch in the middle of that first request would double its
 * time on a two-core machine.
 */
export const STARTUP_QUIET_MS = 250;
/** Quiet time before each backfill batch after the first (~1 ms of work on this thread per batch). */
const BACKFILL_QUIET_MS = 20;
/**
 * Quiet time before the encoding is loaded on this thread. Loading blocks this thread once
 * (~0.35 s on an idle core), so it waits for a real pause, such as an agent waiting for its model
 * (unless appends have paid for the load in round trips before that: see the top of this file).
 */
export const CALLING_THREAD_QUIET_MS = 1000;

export function startBackgroundWork(daemon: BackgroundWorkDaemon, activity: Activity): void {
  const { counter } = daemon;
  const started = activity.whenIdle(STARTUP_QUIET_MS);
  void started
    .then(() => counter.warmUp?.())
    .catch((error: unknown) => log("debug", `token counter warm-up: ${String(error)}`));
  let first = true;
  daemon.sessions.startBackfill({
    whenIdle: () => {
      if (!first) return activity.whenIdle(BACKFILL_QUIET_MS);
      first = false;
      return started;
    },
  });
  // Whichever comes first: a pause, or round trips that added up to the cost of the load. Not
  // gated on the start-up pause: a client that never pauses never gets one.
  const paused = started.then(() => activity.whenIdle(CALLING_THREAD_QUIET_MS)).then(() => "after a pause");
  const paidOff = counter
    .whenCallingThreadLoadPaysOff?.()
    .then(() => betweenRequests(activity))
    .then(() => "waiting for the worker had cost as much");
  void Promise.race(paidOff ? [paused, paidOff] : [paused])
    .then((why) => {
      const loadStarted = performance.now();
      counter.loadOnCallingThread?.();
      if (counter.options.estimator === "exact") {
        log("debug", `loaded the encoding on the main thread in ${(performance.now() - loadStarted).toFixed(0)} ms (${why})`);
      }
    })
    .catch((error: unknown) => log("debug", `loading the encoding on the main thread: ${String(error)}`));
}

/**
 * Resolves when no request is in flight, one turn of the event loop after the last one ended: the
 * reply of a request that just ended may still be queued for writing, and must go out first.
 */
async function betweenRequests(activity: Activity): Promise<void> {
  for (;;) {
    await activity.whenIdle(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (activity.isIdle(0)) return;
  }
}

/** Before the daemon is disposed: no new background batch starts. */
export function stopBackgroundWork(daemon: BackgroundWorkDaemon): void {
  daemon.sessions.stopBackfill();
}
