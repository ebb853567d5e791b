/**
 * Where plugins come in (docs/design.md#hooks-and-ordering, `session_before_tree`). The tree service only knows this
 * interface; the plugin host implements it (running every plugin's hook in order, reporting
 * failures, validating results) and is handed to the service when the daemon is built.
 */
import type { HookBranchSummary, Settings, TreeHookEvent } from "@base-context/protocol";
import type { ClientModel } from "../summarizer/index.js";

/** What the navigation is about, beyond the event plugins see (as `CompactHookContext`). */
export interface TreeHookContext {
  /** Absent for a stateless summary (`summarize/*`) that named no session. */
  readonly sessionId?: string | undefined;
  /** The session's project (its cwd): its trusted plugins run besides the global ones. */
  /** Absent for a stateless summary without a project: only the global plugins run. */
  readonly projectDir?: string | undefined;
  /** The merged settings of the session (`plugins.*` steer the run). */
  readonly settings: Settings;
  /** The model of the client whose request runs the hook, when it offers one (a plugin's `ctx.complete` asks it). */
  readonly clientModel?: ClientModel | undefined;
}

/**
 * What the plugins decided, with the plugin that decided it:
 * - `{ cancel: true }`: navigation is cancelled, nothing is written;
 * - `{ summary }`: written instead of the daemon's summary (only when the user asked for one),
 *   as a branch_summary entry with `fromHook: true` and the plugin's `details` as returned;
 * - `undefined`: no plugin had anything to say; the daemon's default path runs.
 */
export type TreeHookOutcome = { cancel: true; pluginId: string } | { summary: HookBranchSummary; pluginId: string } | undefined;

export interface TreeHooks {
  /**
   * Fires on every navigation that is not a no-op, whether or not a summary was asked for.
   * Must not reject for a plugin's failure (the default path continues); rejects with
   * CancelledError when `signal` aborts.
   */
  runTreeHook(event: TreeHookEvent, signal: AbortSignal, context: TreeHookContext): Promise<TreeHookOutcome>;
}
