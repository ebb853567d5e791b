import type { Settings } from "@base-context/protocol";

/**
 * How settings reach a service (context, compaction, turn/end, tree): the effective settings of
 * a session are its project's (the session's cwd), looked up at each use so an edited file applies
 * to the next request.
 */
export interface SessionSettings {
  /** The effective settings for a session's project; throws session_not_found. */
  forSession(sessionId: string): Settings;
}
