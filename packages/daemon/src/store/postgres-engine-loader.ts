/** Opens the PostgreSQL engine (store/postgres/engine.ts) for openStore. */
import type { StoreEngine } from "./store-engine.js";
import { PostgresEngine } from "./postgres/postgres-engine.js";
import type { StoreLocation } from "./store-location.js";

export function openPostgresEngine(location: StoreLocation & { engine: "postgres" }, options: { applicationName: string }): StoreEngine {
  return PostgresEngine.open(location.url, location.display, options);
}
