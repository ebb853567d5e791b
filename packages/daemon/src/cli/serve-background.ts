/**
 * What a serving daemon does in the gaps between requests, never in their way: warming the token
 * counter, filling in token counts that imports left out, and loading the encoding on the main
 * thread so that small appends are counted on the spot instead of in a worker round trip.
 *
 * None of it happens before the `initialize` reply or while requests are being served: a client
 * that starts the daemon and immediately asks for a context gets it without competing with any
 * of this.
 */
import type { Daemon } from "../daemon.js";
import { log } from "../log.js";
import { requestActivity, type RequestActivity } from "../server/router.js";

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
 * (~0.35 s on an idle core), so it waits for a real pause, such as an agent waiting for its model.
 */
const CALLING_THREAD_QUIET_MS = 1000;

export function startBackgroundWork(daemon: Daemon, activity: RequestActivity = requestActivity): void {
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
  void started
    .then(() => activity.whenIdle(CALLING_THREAD_QUIET_MS))
    .then(() => counter.loadOnCallingThread?.())
    .catch((error: unknown) => log("debug", `loading the encoding on the main thread: ${String(error)}`));
}

/** Before the daemon is disposed: no new background batch starts. */
export function stopBackgroundWork(daemon: Daemon): void {
  daemon.sessions.stopBackfill();
}
