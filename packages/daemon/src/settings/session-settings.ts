import type { Settings, SettingsSource } from "@base-context/protocol";

/**
 * How settings reach a service (context, compaction, turn/end, tree): the effective settings of
 * a session are its project's (the session's cwd), looked up at each use so an edited file applies
 * to the next request.
 */
export interface SessionSettings {
  /** The effective settings for a session's project; throws session_not_found. */
  forSession(sessionId: string): Settings;
  /**
   * Where each `section.key` of those settings came from: a size the user set is kept as is with
   * a window, one left at its default follows its share of the window. Absent: every key
   * counts as set.
   */
  sourcesFor?(sessionId: string): Readonly<Record<string, SettingsSource>>;
}
