/**
 * Opening the store on the engine the user chose (docs/storage.md, "choosing the engine"):
 * `BASE_CONTEXT_STORE_URL`, else `store.url` of the user's settings, else the SQLite file.
 * Every part of the daemon that opens the store (the daemon, the CLI commands, migrate) opens
 * it here, so all of them agree on where sessions are.
 */
import type { IdSource } from "../ids.js";
import type { OwnerProbe } from "./owner.js";
import { PostgresEngine } from "./postgres/postgres-engine.js";
import { SessionStore } from "./session-store.js";
import { storeLocation, StoreOpenError, type StoreLocation, type StoreLocationInputs } from "./store-location.js";

export interface OpenStoreOptions extends StoreLocationInputs {
  /** Where to open, decided already (migrate's `--to`/`--from`); default: from env, settings and `path`. */
  location?: StoreLocation;
  ids?: IdSource;
  /** SQLite: "worker" (default) checkpoints in a worker thread; "sqlite": SQLite's own. */
  checkpoints?: "worker" | "sqlite";
  busyTimeoutMs?: number;
  /** SQLite: how owners of imports and jobs are probed (tests). */
  ownerProbe?: OwnerProbe;
  /** PostgreSQL: what the server shows for this connection (default "base-context"). */
  applicationName?: string;
}

export function openStore(options: OpenStoreOptions = {}): SessionStore {
  const location = options.location ?? storeLocation(options);
  const common = options.ids ? { ids: options.ids } : {};
  if (location.engine === "sqlite") {
    return new SessionStore({
      ...common,
      path: location.path,
      ...(options.checkpoints ? { checkpoints: options.checkpoints } : {}),
      ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
      ...(options.ownerProbe ? { ownerProbe: options.ownerProbe } : {}),
    });
  }
  let engine;
  try {
    engine = PostgresEngine.open(location.url, location.display, { applicationName: options.applicationName ?? "base-context" });
  } catch (error) {
    throw new StoreOpenError(location, error);
  }
  try {
    return new SessionStore({ ...common, engine });
  } catch (error) {
    void engine.close();
    throw new StoreOpenError(location, error);
  }
}
