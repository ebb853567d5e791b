/**
 * The plugin host (docs/design.md#plugins). Integration points:
 * - `new PluginHost(options)`, `await host.start()`; `host.dispose()` on shutdown;
 * - `host.runCompactHook(event, { settings, projectDir, signal, keptEntryIds })` and
 *   `host.runTreeHook(event, { settings, projectDir, signal })` → `HookRun` (none | cancel | result + plugin);
 * - `host.list(projectDir)`, `host.reload(id)`, `host.setTrust(projectDir, trusted)` for the methods;
 * - `host.onDidChange(…)`, `host.onDidError(…)` for the notifications;
 * - `compactHooks(host)` / `treeHooks(host)`: the host as the services' CompactHooks / TreeHooks.
 */
export { compactHooks, treeHooks } from "./adapters.js";
export { PluginHost, type CompactHookCallOptions, type HookCallOptions, type PluginHostOptions } from "./host.js";
export type { HookCheckContext, HookRun } from "./run-hook.js";
export type { PluginRef } from "./managed-plugin.js";
export type { PluginCaller, PluginServices } from "./plugin-services.js";
export { globalPluginsRoot, projectPluginsRoot } from "./discovery.js";
export { normalizeProjectDir } from "./trust.js";
export { scaffoldPlugin, type ScaffoldOptions, type ScaffoldResult } from "./scaffold.js";
