/**
 * What `doctor` learns of a PostgreSQL store without changing it: whether it connects, the server's
 * version, the schema version its tables are at (against the one this build migrates to), how many
 * sessions it holds, and the round-trip latency. Nothing is created or migrated here.
 */
import { POSTGRES_SCHEMA_VERSION, postgresSchemaVersion } from "../store/postgres/schema.js";
import { SyncPostgres } from "../store/postgres/sync-postgres.js";

export interface PostgresProbe {
  serverVersion: string;
  /** Migration steps applied to the database (0: empty, nothing created yet). */
  schemaVersion: number;
  /** The steps this build knows. */
  knownSchemaVersion: number;
  /** Complete sessions; undefined when the schema has no sessions table yet. */
  sessions: number | undefined;
  /** Milliseconds of each `SELECT 1` round trip, in the order measured. */
  roundTripsMs: number[];
}

/** How many round trips the latency is the median of. */
export const ROUND_TRIPS = 5;

/** Connects (PostgresUnavailableError / PostgresError when it cannot), reads, measures, disconnects. */
export async function probePostgres(url: string, timeoutMs: number): Promise<PostgresProbe> {
  const db = SyncPostgres.open(url, { connectTimeoutMs: timeoutMs, statementTimeoutMs: timeoutMs, applicationName: "base-context doctor" });
  try {
    const serverVersion = String(db.query<{ server_version: string }>("SHOW server_version").rows[0]?.server_version ?? "unknown");
    const schemaVersion = postgresSchemaVersion(db);
    const hasSessions = db.query<{ present: boolean }>("SELECT to_regclass('sessions') IS NOT NULL AS present").rows[0]?.present === true;
    const sessions = hasSessions
      ? Number(db.query<{ count: number }>("SELECT count(*) AS count FROM sessions WHERE import_started_ms IS NULL").rows[0]?.count ?? 0)
      : undefined;
    const roundTripsMs: number[] = [];
    for (let trip = 0; trip < ROUND_TRIPS; trip++) {
      const started = performance.now();
      db.query("SELECT 1");
      roundTripsMs.push(performance.now() - started);
    }
    return { serverVersion, schemaVersion, knownSchemaVersion: POSTGRES_SCHEMA_VERSION, sessions, roundTripsMs };
  } finally {
    await db.close();
  }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
