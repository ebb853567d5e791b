/**
 * `base-context doctor`'s store checks on the engine the project runs: which engine and where, and
 * on PostgreSQL the connection (its password never shown), the schema version against the one
 * this build knows, and the round-trip latency.
 */
import { afterEach, describe, expect, it } from "vitest";
import { onPostgres, storeUrlFor, testEngine } from "./support/engine.js";
import { queryJsonSync } from "./support/postgres.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const dirs = tempDirs();
afterEach(dirs.cleanup);

interface DoctorReport {
  ok: boolean;
  store: { engine: string; location: string };
  checks: { name: string; status: string; summary: string; fixes: string[] }[];
}

async function doctor(home: string, env: Record<string, string | undefined> = {}) {
  const run = await runCli(["doctor", "--offline", "--json", "--project", home], { home, env, timeoutMs: 60_000 });
  const report = JSON.parse(run.stdout) as DoctorReport;
  return { code: run.code, report, check: (name: string) => report.checks.find((check) => check.name === name), stderr: run.stderr };
}

describe("doctor: the store", () => {
  it("says which engine holds the sessions and where", async () => {
    const home = dirs.make();
    const { code, report, check } = await doctor(home);
    expect(code).toBe(0);
    expect(report.store.engine).toBe(testEngine);
    if (onPostgres) {
      expect(report.store.location).toMatch(/^postgres:\/\//);
      expect(check("database")).toMatchObject({ status: "ok", summary: expect.stringMatching(/^PostgreSQL postgres:\/\/\S+ \(server \d+/) });
      expect(check("schema")).toMatchObject({ status: "ok", summary: expect.stringMatching(/^empty database: the tables are created on first use/) });
      expect(check("latency")).toMatchObject({ status: "ok", summary: expect.stringMatching(/^median \d+(\.\d+)? ms over 5 round trips/) });
    } else {
      expect(check("database")).toMatchObject({ status: "ok", summary: expect.stringMatching(/^SQLite file .*sessions\.db does not exist yet/) });
      expect(check("schema")).toBeUndefined();
    }
  });

  it("fails clearly when the PostgreSQL server cannot be reached, without showing the password", async () => {
    const home = dirs.make();
    // Port 9 (discard) on loopback: nothing listens there.
    const url = "postgres://me:hunter2@127.0.0.1:9/base_context";
    const run = await runCli(["doctor", "--offline", "--project", home], { home, env: { BASE_CONTEXT_STORE_URL: url } });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^fail\s+database\s+cannot open the session store postgres:\/\/me:\*\*\*@127\.0\.0\.1:9\/base_context: .*ECONNREFUSED/m);
    expect(run.stdout).toMatch(/→ Start the server, or correct the host and port/);
    expect(run.stdout).toMatch(/^skip\s+schema\s+not checked: no connection$/m);
    expect(run.stdout).toMatch(/^skip\s+latency\s+not checked: no connection$/m);
    expect(run.stdout + run.stderr).not.toContain("hunter2");
  });

  it("refuses a store URL that is not PostgreSQL's", async () => {
    const home = dirs.make();
    const { code, check } = await doctor(home, { BASE_CONTEXT_STORE_URL: "mysql://me:hunter2@db/x" });
    expect(code).toBe(1);
    expect(check("database")).toMatchObject({ status: "fail", summary: expect.stringContaining("must be a postgres:// URL") });
    expect(JSON.stringify(check("database"))).not.toContain("hunter2");
  });

  // The schema versions of a PostgreSQL database (a SQLite file's are checked by the database check's own tests).
  describe.runIf(onPostgres)("schema versions", () => {
    const setVersion = (url: string, version: number) =>
      queryJsonSync<boolean>(
        url,
        `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL); DELETE FROM schema_version; INSERT INTO schema_version VALUES (${version}); SELECT 'true'::json`,
      );

    it("current after a daemon used the database, with its sessions counted", async () => {
      const home = dirs.make();
      const imported = await runCli(["import", `${import.meta.dirname}/fixtures/pi-v3.jsonl`], { home });
      expect(imported.code, imported.stderr).toBe(0);
      const { code, check } = await doctor(home);
      expect(code).toBe(0);
      expect(check("schema")).toMatchObject({ status: "ok", summary: expect.stringMatching(/^schema \d+, current, 1 session$/) });
    });

    it("older: to be migrated by the next daemon; newer: a failure that says to update", async () => {
      const home = dirs.make();
      const url = storeUrlFor(home)!;
      setVersion(url, 1);
      const older = await doctor(home);
      expect(older.code).toBe(0);
      expect(older.check("schema")).toMatchObject({ status: "ok", summary: expect.stringMatching(/^schema 1, older: migrated to \d+ when a daemon next opens it/) });

      setVersion(url, 999);
      const newer = await doctor(home);
      expect(newer.code).toBe(1);
      expect(newer.check("schema")).toMatchObject({
        status: "fail",
        summary: expect.stringMatching(/^schema 999 is newer than this base-context knows \(\d+\)/),
        fixes: [expect.stringContaining("Update base-context")],
      });
    });
  });
});
