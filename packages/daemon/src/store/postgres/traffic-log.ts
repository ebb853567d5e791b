/**
 * The debug log's line per store transaction on PostgreSQL: how many statements it sent and how
 * many round trips it waited for (SyncPostgres.traffic), the measure the engine is tuned by
 * (docs/storage.md). Counted always; printed at debug level only.
 */
import { log } from "../../log.js";
import type { PostgresTraffic, SyncPostgres } from "./sync-postgres.js";

/** The traffic when a transaction began; `fixed`: what it had sent when it stopped sending (`sent`). */
type TrafficMark = PostgresTraffic & { at: number; fixed?: PostgresTraffic };

const enabled = (): boolean => process.env.BASE_CONTEXT_LOG === "debug";

export const logTraffic = {
  start(db: SyncPostgres): TrafficMark | undefined {
    return enabled() ? { ...db.traffic, at: performance.now() } : undefined;
  },
  /**
   * What was sent since `before`, fixed now: for a transaction whose answer is awaited while other
   * transactions run, whose traffic must not be counted as its own. `end` then logs these figures.
   */
  sent(db: SyncPostgres, before: TrafficMark | undefined): TrafficMark | undefined {
    return before && { ...before, fixed: db.traffic };
  },
  end(db: SyncPostgres, before: TrafficMark | undefined, what: string): void {
    if (!before) return;
    const { statements, roundTrips } = before.fixed ?? db.traffic;
    const trips = roundTrips - before.roundTrips;
    const sent = statements - before.statements;
    const ms = (performance.now() - before.at).toFixed(2);
    log("debug", `postgres ${what}: ${trips} round trip${trips === 1 ? "" : "s"}, ${sent} statement${sent === 1 ? "" : "s"}, ${ms} ms`);
  },
};
