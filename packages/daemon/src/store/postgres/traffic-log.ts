/**
 * The debug log's line per store transaction on PostgreSQL: how many statements it sent and how
 * many round trips it waited for (SyncPostgres.traffic), the measure the engine is tuned by
 * (docs/storage.md). Counted always; printed at debug level only.
 */
import { log } from "../../log.js";
import type { PostgresTraffic, SyncPostgres } from "./sync-postgres.js";

const enabled = (): boolean => process.env.BASE_CONTEXT_LOG === "debug";

export const logTraffic = {
  start(db: SyncPostgres): (PostgresTraffic & { at: number }) | undefined {
    return enabled() ? { ...db.traffic, at: performance.now() } : undefined;
  },
  end(db: SyncPostgres, before: (PostgresTraffic & { at: number }) | undefined, what: string): void {
    if (!before) return;
    const { statements, roundTrips } = db.traffic;
    const trips = roundTrips - before.roundTrips;
    const ms = (performance.now() - before.at).toFixed(2);
    log("debug", `postgres ${what}: ${trips} round trip${trips === 1 ? "" : "s"}, ${statements - before.statements} statements, ${ms} ms`);
  },
};
