/**
 * The plugin hook point of the pipeline (`session_before_compact`, docs/design.md#hooks-and-ordering). The compaction
 * service knows nothing of workers: whatever implements `CompactHooks` (the plugin host, through
 * a small adapter) runs the plugins and reports which one decided.
 */
import type { CompactHookEvent, HookCompaction, PluginError, Settings } from "@base-context/protocol";
import type { ClientModel } from "../summarizer/index.js";

/** What the decision is about, beyond the event plugins see. */
export interface CompactHookContext {
  /** Absent for a stateless summary (`summarize/*`) that named no session. */
  readonly sessionId?: string | undefined;
  /** The session's project (its cwd): its trusted plugins run besides the global ones. */
  /** Absent for a stateless summary without a project: only the global plugins run. */
  readonly projectDir?: string | undefined;
  /** The merged settings of the session (`plugins.*` steer the run). */
  readonly settings: Settings;
  /** The model of the client whose request runs the hook, when it offers one (a plugin's `ctx.complete` asks it). */
  readonly clientModel?: ClientModel | undefined;
  /** Told when each plugin's hook call starts (its id) and ends (undefined). */
  readonly onPluginCall?: ((pluginId: string | undefined) => void) | undefined;
}

/**
 * A plugin cancelled the compaction, or produced it, or (undefined, or only `failures`) left it
 * to the daemon. `failures`: plugins that failed on the way (skipped), for the result to report.
 */
export type CompactHookOutcome =
  | { readonly cancel: true; readonly pluginId: string; readonly failures?: readonly PluginError[] }
  | { readonly compaction: HookCompaction; readonly pluginId: string; readonly failures?: readonly PluginError[] }
  | { readonly failures: readonly PluginError[] }
  | undefined;

export interface CompactHooks {
  /**
   * Runs `session_before_compact`. Rejects with CancelledError when `signal` aborts; a plugin's
   * own failure must not reject (the default path continues).
   */
  runCompactHook(event: CompactHookEvent, signal: AbortSignal, context: CompactHookContext): Promise<CompactHookOutcome>;
  /**
   * Optional and cheap: false when no plugin could answer for this session, so the pipeline skips
   * reading the whole branch for `branchEntries`.
   */
  hasCompactHook?(context: CompactHookContext): boolean;
}
