/**
 * `doctor`'s checks of the session store, on whichever engine the user chose (docs/storage.md):
 * the SQLite file (checkDatabase), or a PostgreSQL database: the connection, the schema version
 * against the one this build knows, and the round-trip latency. Changes nothing.
 */
import type { StoreLocation } from "../sessions/store-display.js";
import { StoreOpenError } from "../sessions/store-display.js";
import { checkDatabase, type CheckResult } from "./doctor-checks.js";
import { plural } from "./output.js";

/** A median round trip above this makes every append (several round trips) noticeably slower. */
const SLOW_ROUND_TRIP_MS = 20;

export async function checkStore(location: StoreLocation, timeoutMs: number): Promise<CheckResult[]> {
  if (location.engine === "sqlite") {
    const result = checkDatabase(location.path);
    if (result.status === "ok") result.summary = `SQLite file ${result.summary}`;
    return [result];
  }
  const { median, probePostgres } = await import("../sessions/postgres-probe.js");
  let probe: Awaited<ReturnType<typeof probePostgres>>;
  try {
    probe = await probePostgres(location.url, timeoutMs);
  } catch (error) {
    const failure = new StoreOpenError(location, error);
    return [
      { name: "database", status: "fail", summary: failure.message, fixes: connectionFixes(failure.code, location) },
      { name: "schema", status: "skip", summary: "not checked: no connection", fixes: [] },
      { name: "latency", status: "skip", summary: "not checked: no connection", fixes: [] },
    ];
  }
  return [
    { name: "database", status: "ok", summary: `PostgreSQL ${location.display} (server ${probe.serverVersion}), connected`, fixes: [] },
    schemaCheck(probe.schemaVersion, probe.knownSchemaVersion, probe.sessions),
    latencyCheck(probe.roundTripsMs, median(probe.roundTripsMs)),
  ];
}

function schemaCheck(found: number, known: number, sessions: number | undefined): CheckResult {
  const held = sessions === undefined ? "" : `, ${plural(sessions, "session")}`;
  if (found === 0) return { name: "schema", status: "ok", summary: `empty database: the tables are created on first use (schema ${known})`, fixes: [] };
  if (found === known) return { name: "schema", status: "ok", summary: `schema ${found}, current${held}`, fixes: [] };
  if (found < known) {
    return { name: "schema", status: "ok", summary: `schema ${found}, older: migrated to ${known} when a daemon next opens it${held}`, fixes: [] };
  }
  return {
    name: "schema",
    status: "fail",
    summary: `schema ${found} is newer than this base-context knows (${known}): a newer version migrated it${held}`,
    fixes: ["Update base-context here: every daemon that shares the database must be at least as new as the newest one."],
  };
}

function latencyCheck(trips: readonly number[], middle: number): CheckResult {
  const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(0)} ms`;
  const summary = `median ${ms(middle)} over ${trips.length} round trips (fastest ${ms(Math.min(...trips))}, slowest ${ms(Math.max(...trips))})`;
  if (middle <= SLOW_ROUND_TRIP_MS) return { name: "latency", status: "ok", summary, fixes: [] };
  return {
    name: "latency",
    status: "warn",
    summary: `${summary}: an append takes several round trips, so each one waits at least ${ms(middle * 3)}`,
    fixes: ["Run the daemons near the server (same host or network); for one machine the SQLite file is faster."],
  };
}

function connectionFixes(code: string | undefined, location: StoreLocation & { engine: "postgres" }): string[] {
  const where = location.display;
  const fixes: string[] = [];
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EHOSTUNREACH" || code === "ETIMEDOUT") {
    fixes.push(`Start the server, or correct the host and port in ${where}.`);
  } else if (code === "28P01" || code === "28000") {
    fixes.push("Check the user and the password (in the URL, PGPASSWORD or ~/.pgpass) and the server's pg_hba.conf.");
  } else if (code === "3D000") {
    fixes.push(`Create the database first (createdb, with the user and server of ${where}).`);
  } else {
    fixes.push(`Check that the server of ${where} runs and accepts this user from here.`);
  }
  fixes.push(
    "The URL comes from BASE_CONTEXT_STORE_URL, else store.url in your settings (base-context settings shows it); unset both to use the SQLite file.",
  );
  return fixes;
}
