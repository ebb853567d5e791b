/**
 * `plugins/list`, `plugins/reload`, `project/trust`, and the host's news for this client:
 * `plugins/didChange` (a plugin loaded, reloaded, stopped, was disabled) and `plugins/didError`
 * (a hook failed; the daemon went on without it).
 */
import { PluginsDidChange, PluginsDidError, PluginsList, PluginsReload, ProjectTrust } from "@base-context/protocol";
import type { Daemon } from "../../daemon.js";
import type { Peer, Router } from "../router.js";

/** Returns the forwarding of plugin news to `peer`, to dispose when that client leaves. */
export function registerPluginHandlers(router: Router, daemon: Daemon, peer: Peer): { dispose(): void } {
  const { plugins } = daemon;
  // Without a projectDir, the client's own project (from `initialize`) is the one it means.
  router.handle(PluginsList, async (params, ctx) => ({ plugins: await plugins.list(params.projectDir ?? ctx.projectDir) }));
  router.handle(PluginsReload, async (params) => ({ plugins: await plugins.reload(params.id) }));
  router.handle(ProjectTrust, async (params) => {
    await plugins.setTrust(params.projectDir, params.trusted);
    return {};
  });

  const subscriptions = [
    plugins.onDidChange((list) => peer.sendNotification(PluginsDidChange.method, { plugins: list })),
    plugins.onDidError((error) => peer.sendNotification(PluginsDidError.method, error)),
  ];
  // With `serve --socket` clients come and go while the host lives on: stop telling those that left.
  return {
    dispose: () => {
      for (const subscription of subscriptions) subscription.dispose();
    },
  };
}
