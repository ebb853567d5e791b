/**
 * What a serving daemon does in the gaps between requests, never in their way: warming the token
 * counter (its worker loads the encoding: the main thread never does, tokens/create-counter.ts)
 * and filling in token counts that imports left out.
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

/** What it needs to know about requests: when none is in flight, and since when. */
export type Activity = Pick<RequestActivity, "whenIdle">;

/**
 * Quiet time after `initialize` before any of it starts. A client usually sends its first requests
 * right after the reply (a context/build, say), but not always within a few milliseconds of it,
 * and a worker starting or a backfill batch in the middle of that first request would double its
 * time on a two-core machine.
 */
export const STARTUP_QUIET_MS = 250;
/** Quiet time before each backfill batch after the first (each batch is a short piece of work on this thread). */
const BACKFILL_QUIET_MS = 20;

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
}

/** Before the daemon is disposed: no new background batch starts. */
export function stopBackgroundWork(daemon: BackgroundWorkDaemon): void {
  daemon.sessions.stopBackfill();
}
