/**
 * The Base Context plugin SDK.
 *
 * - `definePlugin` and the hook types (events, results, `ctx`);
 * - the daemon's own helpers (`@base-context/core/plugin-api`, the daemon's pure core), so a
 *   plugin serializes and tracks files exactly as the daemon does;
 * - a harness to run a plugin's hooks in-process on a session fixture, without a daemon.
 *
 * Inside the daemon, `@base-context/plugin-sdk` resolves to a module the daemon provides with
 * the same runtime exports minus the harness (a plugin folder needs no node_modules).
 */
export * from "@base-context/core/plugin-api";
export { PluginHookError, runHook, type HarnessLogLine, type RunHookOptions, type RunHookResult } from "./harness.js";
export { SessionFixture, sessionFixture, testSettings, type CompactEventOptions, type TreeEventOptions } from "./fixture.js";
export type {
  CompactHookEvent,
  CompactHookResult,
  ContextMessage,
  HookBranchSummary,
  HookCompaction,
  HookName,
  PluginCompleteRequest,
  PluginCompleteResult,
  PluginContext,
  PluginDefinition,
  PluginHooks,
  PluginLogLevel,
  SessionEntry,
  Settings,
  TreeHookEvent,
  TreeHookPreparation,
  TreeHookResult,
} from "@base-context/protocol";
