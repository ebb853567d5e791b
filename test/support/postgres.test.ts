import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { databasesOn, findPostgresBinaries, startPostgres } from "./postgres.js";
import { useSuiteResource } from "./suite-resource.js";
import { tempDirs } from "./temp-dir.js";

/** Runs one query through psql; its rows, one per line. */
function query(url: string, sql: string): string {
  const psql = join(findPostgresBinaries(), "psql");
  return execFileSync(psql, ["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
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

  it("listens on 127.0.0.1 only, as a real PostgreSQL 15 or later", () => {
    expect(server.adminUrl).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    expect(query(server.adminUrl, "SHOW listen_addresses")).toBe("127.0.0.1");
    expect(Number(query(server.adminUrl, "SHOW server_version_num"))).toBeGreaterThanOrEqual(150000);
  });

  it("gives each caller a fresh, empty database of its own and drops them all", async () => {
    const first = await server.createDatabase();
    const second = await server.createDatabase();
    expect(first).not.toBe(second);
    query(first, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)");
    expect(query(first, "SELECT count(*) FROM t")).toBe("1");
    expect(query(second, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")).toBe("0");
    const names = [first, second].map((url) => new URL(url).pathname.slice(1));
    const listed = () => query(server.adminUrl, "SELECT datname FROM pg_database").split("\n");
    expect(listed()).toEqual(expect.arrayContaining(names));
    await server.dropDatabases();
    expect(listed().filter((name) => names.includes(name))).toEqual([]);
  });

  it("drops a database even while a client is still connected to it", async () => {
    const databases = databasesOn(server.adminUrl);
    const url = await databases.create();
    const psql = join(findPostgresBinaries(), "psql");
    const client = spawn(psql, ["-X", "-d", url, "-c", "SELECT pg_sleep(30)"], { stdio: "ignore" });
    try {
      await expect.poll(() => query(server.adminUrl, `SELECT count(*) FROM pg_stat_activity WHERE datname = '${new URL(url).pathname.slice(1)}'`)).toBe("1");
      await databases.drop(url);
      expect(query(server.adminUrl, "SELECT count(*) FROM pg_database WHERE datname LIKE 't\\_%'")).toBe("0");
    } finally {
      client.kill("SIGKILL");
    }
  });
});

describe("stopping the test server", () => {
  it("stops listening and removes its folder, and a second stop is harmless", async () => {
    const server = await startPostgres();
    const socketFolder = query(server.adminUrl, "SHOW unix_socket_directories");
    expect(existsSync(socketFolder)).toBe(true);
    expect(await accepts(server.port)).toBe(true);
    await server.stop();
    expect(await accepts(server.port)).toBe(false);
    expect(existsSync(socketFolder)).toBe(false);
    await server.stop();
  });
});

describe("finding PostgreSQL's programs", () => {
  const dirs = tempDirs();
  afterEach(dirs.cleanup);
  afterAll(dirs.cleanup);

  it("says what to install when they are missing", () => {
    expect(() => findPostgresBinaries([dirs.make()])).toThrow(/initdb, pg_ctl, postgres, psql.*not found.*apt-get install postgresql/s);
  });
});
