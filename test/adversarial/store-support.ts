/**
 * Shared pieces of the store's adversarial tests: a read-only look at a daemon's database (its
 * SQLite file, or in the postgres project the home's PostgreSQL database), the integrity checks run
 * after every kill, a seeded PRNG, and pi files to import.
 */
import type { EntryInput } from "@base-context/protocol";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import type { TestDaemon } from "../support/daemon.js";
import { storeUrlFor } from "../support/engine.js";
import { queryJsonSync } from "../support/postgres.js";
import { waitFor } from "../support/wait.js";

const requireFromDaemon = createRequire(fileURLToPath(new URL("../../packages/daemon/package.json", import.meta.url)));
const Database = requireFromDaemon("better-sqlite3") as typeof BetterSqlite3;

/** Runs `look` on a read-only connection to `<home>/sessions.db`. */
export function inspectDatabase<T>(home: string, look: (db: BetterSqlite3.Database) => T): T {
  const db = new Database(join(home, "sessions.db"), { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    return look(db);
  } finally {
    db.close();
  }
}

export interface StoredRow {
  id: string;
  parent_id: string | null;
  json: string;
}

/**
 * "ok" when the store is sound: PRAGMA integrity_check's verdict on SQLite; on PostgreSQL (whose
 * crash recovery is the server's), that the database answers and every entry's parent is in its session.
 */
export function integrity(home: string): string {
  const url = storeUrlFor(home);
  if (url !== undefined) {
    const orphans = queryJsonSync<number>(
      url,
      `SELECT count(*) FROM entries e WHERE e.parent_id IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM entries p WHERE p.session_id = e.session_id AND p.id = e.parent_id)`,
    );
    return orphans === 0 ? "ok" : `${orphans} entries whose parent is not in their session`;
  }
  return inspectDatabase(home, (db) => db.pragma("integrity_check", { simple: true }) as string);
}

/** A session's rows in insertion order (importing or not). */
export function sessionRows(home: string, sessionId: string): StoredRow[] {
  const url = storeUrlFor(home);
  if (url !== undefined) {
    return queryJsonSync<StoredRow[]>(
      url,
      `SELECT coalesce(json_agg(json_build_object('id', id, 'parent_id', parent_id, 'json', json) ORDER BY seq), '[]')
         FROM entries WHERE session_id = :'session'`,
      { session: sessionId },
    );
  }
  return inspectDatabase(home, (db) =>
    db.prepare("SELECT id, parent_id, json FROM entries WHERE session_id = ? ORDER BY seq").all(sessionId) as StoredRow[],
  );
}

/** How many entries of a session are stored (importing or not), without reading them. */
export function storedEntryCount(home: string, sessionId: string): number {
  const url = storeUrlFor(home);
  if (url !== undefined) return queryJsonSync<number>(url, `SELECT count(*) FROM entries WHERE session_id = :'session'`, { session: sessionId });
  return inspectDatabase(home, (db) => db.prepare("SELECT count(*) FROM entries WHERE session_id = ?").pluck().get(sessionId) as number);
}

/** Whether `sessionId` has a row flagged as still importing. */
export function isImporting(home: string, sessionId: string): boolean {
  const url = storeUrlFor(home);
  if (url !== undefined) {
    return queryJsonSync<boolean>(url, `SELECT to_json(EXISTS (SELECT 1 FROM sessions WHERE id = :'session' AND import_started_ms IS NOT NULL))`, {
      session: sessionId,
    });
  }
  return inspectDatabase(home, (db) => {
    const row = db.prepare("SELECT import_started_ms FROM sessions WHERE id = ?").get(sessionId) as
      | { import_started_ms: number | null }
      | undefined;
    return row !== undefined && row.import_started_ms !== null;
  });
}

/**
 * SIGKILLs a daemon (no goodbye to its store) and waits until it is gone for the other daemons:
 * its process has exited and, on PostgreSQL, the server has ended its lease connection. The server
 * learns of the death from the closed socket, which the connection's backend reads when it next
 * runs (moments after the exit, later on a loaded machine); until then the lease's lock is held and
 * the killed daemon still counts as alive (store/postgres/lease.ts).
 */
export async function kill(daemon: TestDaemon): Promise<void> {
  const url = storeUrlFor(daemon.home);
  const leaseBackend = url === undefined ? undefined : await leaseBackendOf(url, daemon.process.pid!);
  daemon.process.kill("SIGKILL");
  await daemon.exited;
  if (url !== undefined) await backendEnded(url, leaseBackend!);
  await daemon.close();
}

/** The server process (backend) of the connection holding the lease of the daemon whose pid is `pid`. */
async function leaseBackendOf(url: string, pid: number): Promise<number> {
  const rows = await query<{ backend: number }>(
    url,
    `SELECT l.pid AS backend FROM daemons d
       JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.objid = d.id::oid
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     WHERE d.pid = $1`,
    [pid],
  );
  if (rows.length !== 1) throw new Error(`daemon ${pid} holds ${rows.length} leases on its store, expected one`);
  return rows[0]!.backend;
}

/** Resolves once the server process `backend` has ended (its locks are released before it leaves pg_stat_activity). */
async function backendEnded(url: string, backend: number): Promise<void> {
  await waitFor(
    async () => (await query(url, "SELECT 1 FROM pg_stat_activity WHERE pid = $1", [backend])).length === 0,
    { timeoutMs: 20_000, message: `the server ended the killed daemon's lease connection (backend ${backend})` },
  );
}

async function query<Row>(url: string, sql: string, params: unknown[]): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Row[];
  } finally {
    await client.end();
  }
}

export const user = (content: string): EntryInput => ({ type: "message", message: { role: "user", content, timestamp: 1 } });
export const assistant = (text: string): EntryInput => ({
  type: "message",
  message: { role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m", timestamp: 1 },
});
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The adversarial suite's one seeded PRNG (framing-cases.ts): the same "random" delays on every run. */
export { seededRandom as seeded } from "./framing-cases.js";

/** Writes a pi v3 file of one chain of `count` messages; returns its session id. */
export function writePiFile(path: string, sessionId: string, count: number, pad = 300): void {
  const lines = [
    JSON.stringify({ type: "session", version: 3, id: sessionId, timestamp: "2026-03-01T12:00:00.000Z", cwd: "/adversarial" }),
  ];
  let parentId: string | null = null;
  for (let index = 0; index < count; index++) {
    const id = `e${index.toString(16).padStart(7, "0")}`;
    const role = index % 2 === 0 ? "user" : "assistant";
    const message =
      role === "user"
        ? { role, content: `question ${index} ${"x".repeat(pad)}`, timestamp: 1 }
        : { role, content: [{ type: "text", text: `answer ${index} ${"y".repeat(pad)}` }], provider: "p", model: "m", timestamp: 1 };
    lines.push(JSON.stringify({ type: "message", id, parentId, timestamp: "2026-03-01T12:00:01.000Z", message }));
    parentId = id;
  }
  writeFileSync(path, `${lines.join("\n")}\n`);
}

/**
 * The checks after every kill, for one session written by one writer at a time: every entry's
 * parent is the entry before it (one chain), every acknowledged id is there exactly once. Returns
 * the problems found (empty when none) and how many acknowledged entries are missing.
 */
export function checkChain(rows: readonly StoredRow[], acknowledged: readonly string[]): { problems: string[]; missing: number } {
  const problems: string[] = [];
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
    const expectedParent = index === 0 ? null : rows[index - 1]!.id;
    if (row.parent_id !== expectedParent) problems.push(`entry ${row.id} has parent ${row.parent_id}, expected ${expectedParent}`);
  });
  let missing = 0;
  for (const id of acknowledged) {
    const times = seen.get(id) ?? 0;
    if (times !== 1) problems.push(`acknowledged entry ${id} is stored ${times} times`);
    if (times === 0) missing++;
  }
  return { problems, missing };
}
