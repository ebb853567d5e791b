import type { PluginDefinition } from "@base-context/protocol";

/**
 * Returns the plugin unchanged: it only gives the hooks' `event` and `ctx` their types.
 * A plain object default export works the same.
 */
export function definePlugin<T extends PluginDefinition>(plugin: T): T {
  return plugin;
}
