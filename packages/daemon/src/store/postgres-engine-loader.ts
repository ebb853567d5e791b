/** Placeholder until the PostgreSQL engine is merged: replaced in the next commit. */
import type { StoreEngine } from "./engine.js";
import type { StoreLocation } from "./store-location.js";

export function openPostgresEngine(location: StoreLocation & { engine: "postgres" }, _options: { applicationName: string }): StoreEngine {
  throw new Error(`this build has no PostgreSQL engine yet (${location.display})`);
}
