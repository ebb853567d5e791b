/**
 * The plugin host seen through the hook interfaces the compaction and tree services declare
 * (hooks/compact-hooks.ts, hooks/tree-hooks.ts): hand `compactHooks(host)` / `treeHooks(host)` to them when
 * the daemon is built.
 */
import type { CompactHooks } from "../hooks/compact-hooks.js";
import type { TreeHooks } from "../hooks/tree-hooks.js";
import type { PluginHost } from "./host.js";
import type { HookRun } from "./run-hook.js";

function outcome<V, K extends string>(
  run: HookRun<V>,
  key: K,
): { cancel: true; pluginId: string } | ({ pluginId: string } & Record<K, V>) | undefined {
  if (run.kind === "cancel") return { cancel: true, pluginId: run.plugin.id };
  if (run.kind === "result") return { pluginId: run.plugin.id, [key]: run.value } as { pluginId: string } & Record<K, V>;
  return undefined;
}

/** The outcome with the plugins that failed on the way, so the result can say so. */
function withFailures<V, K extends string>(run: HookRun<V>, key: K) {
  const decided = outcome(run, key);
  if (run.errors.length === 0) return decided;
  return decided === undefined ? { failures: run.errors } : { ...decided, failures: run.errors };
}

export function compactHooks(host: PluginHost): CompactHooks {
  return {
    runCompactHook: async (event, signal, context) =>
      withFailures(
        await host.runCompactHook(event, {
          settings: context.settings,
          projectDir: context.projectDir,
          signal,
          ...(context.onPluginCall ? { onPluginCall: context.onPluginCall } : {}),
        }),
        "compaction",
      ),
    hasCompactHook: (context) => host.hasHook("session_before_compact", context),
  };
}

export function treeHooks(host: PluginHost): TreeHooks {
  return {
    runTreeHook: async (event, signal, context) =>
      outcome(await host.runTreeHook(event, { settings: context.settings, projectDir: context.projectDir, signal }), "summary"),
  };
}

