/** settings/get and the settings/didChange notification (invalid files are also logged as warnings). */
import { SettingsDidChange, SettingsGet } from "@base-context/protocol";
import type { Daemon } from "../../daemon.js";
import { settingsForDisplay } from "../../sessions/store-display.js";
import type { Peer, Router } from "../router.js";

export function registerSettingsHandlers(router: Router, daemon: Daemon, peer: Peer): { dispose(): void } {
  // Without a projectDir the client's project (from `initialize`) applies, else the global settings alone.
  // store.url's password is never sent (sessions/store-display.ts).
  router.handle(SettingsGet, (p, ctx) => settingsForDisplay(daemon.settings.get(p.projectDir ?? ctx.projectDir)));
  return daemon.settings.onDidChange((event) => peer.sendNotification(SettingsDidChange.method, event));
}
