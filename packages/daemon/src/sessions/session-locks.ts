/**
 * One long operation per session at a time, within this process: the daemon makes one
 * SessionLocks and gives it to both compaction and tree navigation, so a navigation while a
 * compaction of the same session runs (or the reverse) is refused too. A second operation is
 * refused at once with `session_busy` rather than queued: a queued compaction would run right
 * after the first on a context that no longer needs it, and the client is better placed to decide
 * whether to retry. Appends never take the lock.
 */
import { AppError } from "../errors.js";

export class SessionLocks {
  /** Session id → what holds it (e.g. "compaction"). */
  private readonly held = new Map<string, string>();

  /**
   * Takes the session's lock for `operation`; the returned function releases it (once).
   * Throws AppError `session_busy` when another operation holds it.
   */
  acquire(sessionId: string, operation: string): () => void {
    const holder = this.held.get(sessionId);
    if (holder !== undefined) {
      throw new AppError("session_busy", `session "${sessionId}" is busy: a ${holder} is already running; retry when it has finished`, {
        sessionId,
        operation: holder,
      });
    }
    this.held.set(sessionId, operation);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held.delete(sessionId);
    };
  }

  /** What holds the session's lock, or undefined. */
  holder(sessionId: string): string | undefined {
    return this.held.get(sessionId);
  }
}
