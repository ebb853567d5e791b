/**
 * scripts/local-postgres.mjs, the README's one command for trying PostgreSQL: it creates a cluster
 * in the folder given, starts it, prints a URL the daemon can use, starts it again idempotently,
 * and stops it.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { queryJsonSync } from "../support/postgres.js";
import { runCli } from "../support/run-cli.js";
import { tempDirs } from "../support/temp-dir.js";

const SCRIPT = join(import.meta.dirname, "..", "..", "scripts", "local-postgres.mjs");
const dirs = tempDirs();
/** initdb, server starts and stops, each a process that takes seconds on a busy machine. */
const SEVERAL_SERVER_STARTS_MS = 180_000;

function script(...args: string[]) {
  const result = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: "utf8", timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A folder the server's user can reach even when the tests run as root (the cluster is then the postgres user's). */
function reachableFolder(): string {
  const parent = dirs.make("bc-local-postgres-");
  chmodSync(parent, 0o755);
  return join(parent, "cluster");
}

describe("scripts/local-postgres.mjs", () => {
  const started: string[] = [];
  afterAll(() => {
    for (const folder of started) script(folder, "--stop");
    dirs.cleanup();
  });

  it(
    "creates and starts a cluster, prints a URL the daemon uses, starts again idempotently, stops",
    async () => {
      const folder = reachableFolder();
      started.push(folder);
      const first = script(folder);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^postgres:\/\/base_context:[\w-]+@127\.0\.0\.1:\d+\/base_context\n$/);
      expect(first.stderr).toContain(`Created a PostgreSQL cluster in ${folder}`);
      expect(first.stderr).toContain("export BASE_CONTEXT_STORE_URL=");
      const url = first.stdout.trim();
      expect(queryJsonSync<string>(url, "SELECT to_json(current_user || '@' || current_database())")).toBe("base_context@base_context");

      const home = dirs.make();
      const doctor = await runCli(["doctor", "--offline", "--project", home], { home, env: { BASE_CONTEXT_STORE_URL: url } });
      expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
      expect(doctor.stdout).toMatch(/^ok\s+database\s+PostgreSQL postgres:\/\/base_context:\*\*\*@127\.0\.0\.1:\d+\/base_context \(server/m);

      const again = script(folder);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim()).toBe(url);
      expect(again.stderr).not.toContain("Created");

      const stopped = script(folder, "--stop");
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stderr).toContain(`Stopped the server in ${folder}.`);
      expect(() => queryJsonSync<string>(url, "SELECT to_json(1)")).toThrow();
      expect(script(folder, "--stop").stderr).toContain("was not running");

      const restarted = script(folder);
      expect(restarted.code, restarted.stderr).toBe(0);
      expect(queryJsonSync<number>(restarted.stdout.trim(), "SELECT to_json(1)")).toBe(1);
    },
    SEVERAL_SERVER_STARTS_MS,
  );

  it("refuses a folder that has other files, and a missing folder argument", () => {
    const folder = reachableFolder();
    mkdirSync(folder);
    writeFileSync(join(folder, "notes.txt"), "mine");
    const refused = script(folder);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${folder} exists and is not empty`);
    const usage = script();
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("Usage: node scripts/local-postgres.mjs <folder> [--stop]");
  });
});
