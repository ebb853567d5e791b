/**
 * Where the store is (SQLite file or PostgreSQL URL) and why it could not be opened, for the
 * start-up error messages of `serve` and the CLI: no driver is loaded by this module.
 */
import type { Settings } from "@base-context/protocol";
import { redactStoreUrl } from "../store/store-location.js";

export { sqliteAddonError } from "../store/sqlite/addon.js";

export { redactStoreUrl, STORE_URL_ENV, storeLocation, StoreOpenError, StoreUrlError, type StoreLocation } from "../store/store-location.js";

/**
 * The settings as they may be shown (settings/get, `base-context settings`): `store.url` with its
 * password replaced by "***". Neither a client nor a terminal needs the password; the daemon reads
 * the URL from the settings files itself.
 */
export function settingsForDisplay<T extends { settings: Settings }>(snapshot: T): T {
  const url = snapshot.settings.store?.url;
  if (url === undefined) return snapshot;
  return { ...snapshot, settings: { ...snapshot.settings, store: { ...snapshot.settings.store, url: redactStoreUrl(url) } } };
}
