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

/** Quiet time before the counting worker starts loading its encoding (on its own thread). */
const WARM_UP_QUIET_MS = 50;
/** Quiet time before each backfill batch (~1 ms of work on this thread per batch). */
const BACKFILL_QUIET_MS = 20;
/**
 * Quiet time before the encoding is loaded on this thread. Loading blocks this thread once
 * (~0.35 s on an idle core), so it waits for a real pause, such as an agent waiting for its model.
 */
const CALLING_THREAD_QUIET_MS = 1000;

export function startBackgroundWork(daemon: Daemon, activity: RequestActivity = requestActivity): void {
  const { counter } = daemon;
  const whenIdle = (quietMs: number) => activity.whenIdle(quietMs);
  void whenIdle(WARM_UP_QUIET_MS)
    .then(() => counter.warmUp?.())
    .catch((error: unknown) => log("debug", `token counter warm-up: ${String(error)}`));
  daemon.sessions.startBackfill({ whenIdle: () => whenIdle(BACKFILL_QUIET_MS) });
  void whenIdle(CALLING_THREAD_QUIET_MS)
    .then(() => counter.loadOnCallingThread?.())
    .catch((error: unknown) => log("debug", `loading the encoding on the main thread: ${String(error)}`));
}

/** Before the daemon is disposed: no new background batch starts. */
export function stopBackgroundWork(daemon: Daemon): void {
  daemon.sessions.stopBackfill();
}
