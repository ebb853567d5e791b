/**
 * A real PostgreSQL server for the tests: `initdb` in a temporary folder, started with `pg_ctl` on a
 * free port (127.0.0.1 only, its unix socket inside the folder), stopped and removed by `stop()`.
 * The server's programs are the machine's, or those of the npm package the workspace pins
 * (scripts/lib/postgres-programs.mjs). Run as root (CI), the server runs as the `postgres` user
 * (or `nobody` where there is none), since initdb refuses root; otherwise as the current user.
 * Each test takes a fresh database from `createDatabase()`.
 *
 *   const server = await startPostgres();
 *   const url = await server.createDatabase();   // postgres://postgres@127.0.0.1:<port>/t_…
 *   …
 *   await server.stop();
 *
 * Databases are made, dropped and queried with `pg` (no client program is needed); worker
 * processes that only know the admin URL use `databasesOn`.
 */
import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { asServerUser, findServerPrograms, serverUser, type ServerUser } from "../../scripts/lib/postgres-programs.mjs";

/** The superuser the test server is created with, whoever runs it. */
const SUPERUSER = "postgres";

/** Settings for a throwaway server: durability is not needed, speed is. */
const SERVER_SETTINGS: Record<string, string> = {
  listen_addresses: "127.0.0.1",
  fsync: "off",
  synchronous_commit: "off",
  full_page_writes: "off",
  // Several daemons per test, each with a pool, a LISTEN connection and a lease connection.
  max_connections: "300",
  shared_buffers: "32MB",
  // Lock-heavy tests (advisory locks per session) must not run out of lock slots.
  max_locks_per_transaction: "256",
};

export interface PostgresServer {
  /** The superuser's URL of the `postgres` database (manage databases with it, never store data in it). */
  readonly adminUrl: string;
  readonly port: number;
  /** A new, empty database of its own; its URL. Dropped by `dropDatabases()` or when the server stops. */
  createDatabase(): Promise<string>;
  /** Drops every database `createDatabase` made (connections to them are ended). */
  dropDatabases(): Promise<void>;
  /** Stops the server and removes its folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** The folder of the server's programs (see scripts/lib/postgres-programs.mjs for where it looks). */
export function findPostgresBinaries(): string {
  return findServerPrograms().bindir;
}

let foundBinaries: string | undefined;

/** findPostgresBinaries, looked up once per process. */
function postgresBinaries(): string {
  foundBinaries ??= findPostgresBinaries();
  return foundBinaries;
}

/** Starts a server in a new temporary folder; retries on another port if the chosen one was taken meanwhile. */
export async function startPostgres(): Promise<PostgresServer> {
  const bindir = postgresBinaries();
  const user = serverUser();
  const folder = mkdtempSync(join(tmpdir(), "bc-postgres-"));
  const dataDir = join(folder, "data");
  const logFile = join(folder, "server.log");
  const run = (program: string, args: string[]) => runServerProgram(join(bindir, program), args, user);
  const removeFolder = () => rmSync(folder, { recursive: true, force: true });
  try {
    if (user !== undefined) chownSync(folder, user.uid, user.gid);
    await run("initdb", ["-D", dataDir, "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]);
  } catch (error) {
    removeFolder();
    throw error;
  }

  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const options = [`-p ${port}`, `-k '${folder}'`, ...Object.entries(SERVER_SETTINGS).map(([key, value]) => `-c ${key}=${value}`)];
    try {
      await run("pg_ctl", ["start", "-w", "-t", "60", "-D", dataDir, "-l", logFile, "-o", options.join(" ")]);
      break;
    } catch (error) {
      const log = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
      if (attempt < 5 && /could not bind|Address already in use/i.test(log)) continue;
      removeFolder();
      throw new Error(`the test PostgreSQL server did not start: ${(error as Error).message}\n${log}`);
    }
  }

  let stopped = false;
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    const [command, args] = asServerUser(join(bindir, "pg_ctl"), ["stop", "-D", dataDir, "-m", "immediate", "-w"], user);
    spawnSync(command, args, { stdio: "ignore" });
    removeFolder();
  };
  // A run that ends without its teardown (an exception, Ctrl-C) still stops the server.
  process.once("exit", stopNow);

  const adminUrl = `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`;
  const databases = databasesOn(adminUrl);
  return {
    adminUrl,
    port,
    createDatabase: databases.create,
    dropDatabases: databases.dropAll,
    async stop() {
      if (stopped) return;
      process.removeListener("exit", stopNow);
      try {
        await run("pg_ctl", ["stop", "-D", dataDir, "-m", "immediate", "-w"]);
      } catch {
        // Already gone: removing the folder is all that is left.
      }
      stopped = true;
      removeFolder();
    },
  };
}

export interface Databases {
  /** A new, empty database; its URL. */
  create(): Promise<string>;
  /** Drops a database made here (connections to it are ended). */
  drop(url: string): Promise<void>;
  /** Drops every database made here that is not dropped yet. */
  dropAll(): Promise<void>;
  /**
   * The same, blocking: for code that builds a child's environment synchronously. Each blocking
   * call costs a Node process, so createSync makes a few databases at a time, and dropSync of one
   * of them leaves it to dropAllSync, which drops them all with one process.
   */
  createSync(): string;
  dropSync(url: string): void;
  dropAllSync(): void;
}

let databaseCounter = 0;
/** Databases createSync makes at a time (a test file in the postgres project makes one per home). */
const SYNC_BATCH = 4;

/** Makes and drops databases on the server of `adminUrl` (from any process: it speaks to the server over TCP). */
export function databasesOn(adminUrl: string): Databases {
  const made = new Set<string>();
  /** Made by createSync and not handed out yet (also in `made`). */
  const stock: string[] = [];
  const runSql = (sql: string) => runStatement(adminUrl, sql);
  const runAllSync = (statements: string[]) => void runSqlProcess({ url: adminUrl, statements });
  const newName = () => `t_${process.pid}_${++databaseCounter}_${Math.random().toString(36).slice(2, 8)}`;
  const urlOf = (name: string) => {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    made.add(url.href);
    return url.href;
  };
  const dropSql = (url: string) => {
    made.delete(url);
    return `DROP DATABASE IF EXISTS "${databaseName(url)}" WITH (FORCE)`;
  };
  return {
    async create() {
      const name = newName();
      await runSql(`CREATE DATABASE "${name}"`);
      return urlOf(name);
    },
    createSync() {
      if (stock.length === 0) {
        const names = Array.from({ length: SYNC_BATCH }, newName);
        runAllSync(names.map((name) => `CREATE DATABASE "${name}"`));
        stock.push(...names.map(urlOf));
      }
      return stock.shift()!;
    },
    drop: (url) => runSql(dropSql(url)),
    dropSync(url) {
      if (!made.has(url)) runAllSync([dropSql(url)]);
    },
    async dropAll() {
      stock.length = 0;
      for (const url of [...made]) await runSql(dropSql(url));
    },
    dropAllSync() {
      stock.length = 0;
      if (made.size > 0) runAllSync([...made].map(dropSql));
    },
  };
}

/**
 * Runs one query that yields one JSON value (e.g. `SELECT coalesce(json_agg(…), '[]') …`) and returns it
 * parsed. `variables` are bound where the query says `:'name'` (as in psql).
 */
export function queryJsonSync<T>(url: string, sql: string, variables: Record<string, string> = {}): T {
  const params: string[] = [];
  const text = sql.replace(/:'(\w+)'/g, (_, name: string) => {
    if (!(name in variables)) throw new Error(`queryJsonSync: no value for :'${name}'`);
    params.push(variables[name]!);
    return `$${params.length}`;
  });
  const rows = runStatementSync(url, text, params);
  const first = rows[0];
  if (first === undefined) throw new Error(`queryJsonSync: ${JSON.stringify(sql)} returned no row`);
  return Object.values(first)[0] as T;
}

/** One statement, in this process. */
async function runStatement(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    await client.query(sql);
  } catch (error) {
    throw new Error(`${sql} failed: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => {});
  }
}

const PG_SQL = join(import.meta.dirname, "pg-sql.mjs");

/** One statement with parameters, blocking; its rows. */
function runStatementSync(url: string, sql: string, params: string[] = []): Record<string, unknown>[] {
  return runSqlProcess({ url, sql, params });
}

/**
 * What pg-sql.mjs is given (`sql` with `params`, or `statements` one after another), run by a
 * child process, blocking: the last statement's rows.
 */
function runSqlProcess(input: { url: string; sql?: string; params?: string[]; statements?: string[] }): Record<string, unknown>[] {
  const result = spawnSync(process.execPath, [PG_SQL], {
    input: JSON.stringify(input),
    encoding: "utf8",
    // Whole sessions come back as one JSON value (thousands of entries).
    maxBuffer: 1024 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${JSON.stringify(input.sql ?? input.statements)} failed: ${result.stderr.trim()}`);
  return JSON.parse(result.stdout) as Record<string, unknown>[];
}

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

function runServerProgram(program: string, args: string[], user: ServerUser | undefined): Promise<void> {
  const [command, commandArgs] = asServerUser(program, args, user);
  // The server outlives pg_ctl: it must not inherit this process's output or its locale quirks.
  return runProgram(command, commandArgs, { ...process.env, LC_ALL: "C" });
}

/** Runs a program to its end; rejects with its output when it fails. */
function runProgram(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(" ")} failed (${signal ?? `exit ${code}`}):\n${output.trim()}`));
    });
  });
}

/** A port nobody listens on right now (the server binds it a moment later; startPostgres retries if it lost the race). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
