/**
 * `base-context migrate`: the SQLite file's sessions copied to another database and back, as a
 * user runs it. In the postgres project the other database is PostgreSQL (a fresh database on the
 * run's server); in the sqlite project it is another SQLite file (a file: URL), so the copying,
 * verifying and resuming are checked on both engines' stores.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { onPostgres, storeUrlFor } from "./support/engine.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const dirs = tempDirs();
afterEach(dirs.cleanup);
const builtOnce = tempDirs();
afterAll(builtOnce.cleanup);

const FIXTURES = join(import.meta.dirname, "fixtures");
const EXAMPLE = join(import.meta.dirname, "..", "examples", "sessions", "refactor-auth.jsonl");
const EXAMPLE_ID = "5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13";
const PI_V3_ID = "3f2b8a1e-6c4d-4e8f-9a7b-5d1c0e2f4a6b";
/** The CLI on the home's SQLite file, whichever engine the project runs the daemon on. */
const ON_SQLITE = { BASE_CONTEXT_STORE_URL: undefined };

interface Target {
  /** What `--to` / `--from` is given. */
  url: string;
  /** The environment that makes the other commands work on the target. */
  env: Record<string, string | undefined>;
}

function newTarget(): Target {
  const folder = dirs.make();
  if (onPostgres) {
    const url = storeUrlFor(folder)!;
    return { url, env: { BASE_CONTEXT_STORE_URL: url } };
  }
  const path = join(folder, "target.db");
  return { url: pathToFileURL(path).href, env: { ...ON_SQLITE, BASE_CONTEXT_DB: path } };
}

async function cli(args: string[], home: string, env: Record<string, string | undefined> = ON_SQLITE) {
  return runCli(args, { home, env, timeoutMs: 60_000 });
}

/**
 * Each step of these tests runs the CLI as a process (a second or so on a busy machine), and a
 * test runs up to thirty of them in order: the budget is for that many, not for waiting on anything.
 */
const MANY_RUNS_MS = 180_000;

let original: Promise<string> | undefined;
beforeAll(async () => {
  original = makeSourceHome();
  await original;
}, MANY_RUNS_MS);

/**
 * A home whose SQLite file has sessions with what a copy could lose: versions 1–3, a rename, a
 * label, a moved position, counts. Made once; each test gets its own copy of the folder.
 */
async function sourceHome(): Promise<string> {
  if (!original) throw new Error("the source home is made in beforeAll");
  const home = dirs.make();
  cpSync(await original, home, { recursive: true });
  return home;
}

async function makeSourceHome(): Promise<string> {
  const home = builtOnce.make();
  for (const file of [EXAMPLE, join(FIXTURES, "pi-v1.jsonl"), join(FIXTURES, "pi-v2.jsonl"), join(FIXTURES, "pi-v3.jsonl")]) {
    const run = await cli(["import", file], home);
    expect(run.code, run.stderr).toBe(0);
  }
  const steps = [
    ["rename", EXAMPLE_ID, "Stateless auth"],
    ["label", PI_V3_ID, "1b2c3d4e", "model chosen"],
    // `show` counts the entries' tokens and stores the counts.
    ["show", EXAMPLE_ID],
  ];
  for (const step of steps) {
    const run = await cli(step, home);
    expect(run.code, `${step.join(" ")}: ${run.stderr}`).toBe(0);
  }
  const entries = (await cli(["export", EXAMPLE_ID], home)).stdout.trim().split("\n").slice(1);
  const earlier = (JSON.parse(entries[20]!) as { id: string }).id;
  const navigated = await cli(["navigate", EXAMPLE_ID, earlier], home);
  expect(navigated.code, navigated.stderr).toBe(0);
  return home;
}

async function sessionIds(home: string, env?: Record<string, string | undefined>): Promise<string[]> {
  const run = await cli(["sessions", "--json", "--limit", "100"], home, env);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { sessions: { id: string }[] }).sessions.map((session) => session.id).sort();
}

/** Every session's `export` (the pi file: header and every entry as stored) and listing. */
async function contents(home: string, env?: Record<string, string | undefined>) {
  const listing = JSON.parse((await cli(["sessions", "--json", "--limit", "100"], home, env)).stdout) as { sessions: { id: string }[] };
  const exports: Record<string, string> = {};
  for (const { id } of listing.sessions) {
    const run = await cli(["export", id], home, env);
    expect(run.code, run.stderr).toBe(0);
    exports[id] = run.stdout;
  }
  return { sessions: listing.sessions.sort((a, b) => (a.id < b.id ? -1 : 1)), exports };
}

describe("migrate", () => {
  it("copies every session to the other database and back, byte for byte", async () => {
    const home = await sourceHome();
    const before = await contents(home);
    expect(Object.keys(before.exports)).toHaveLength(4);
    const target = newTarget();

    const to = await cli(["migrate", "--to", target.url], home);
    expect(to.code, to.stderr).toBe(0);
    for (const id of Object.keys(before.exports)) expect(to.stderr).toMatch(new RegExp(`^\\[\\d/4\\] copied +${id}.*verified \\(sha256 [0-9a-f]{12}\\)`, "m"));
    expect(to.stdout).toMatch(/^ {2}copied +4 +\(\d+ entries\)$/m);
    expect(await contents(home, target.env)).toEqual(before);

    const backHome = dirs.make();
    const backDb = join(backHome, "back.db");
    const back = await cli(["migrate", "--from", target.url, "--db", backDb, "--json"], home);
    expect(back.code, back.stderr).toBe(0);
    const report = JSON.parse(back.stdout) as { ok: boolean; copied: number; sessions: { status: string; checksum: string }[] };
    expect(report).toMatchObject({ ok: true, copied: 4, skipped: 0, conflicts: 0, failed: 0 });
    expect(await contents(backHome, { ...ON_SQLITE, BASE_CONTEXT_DB: backDb })).toEqual(before);

    // The checksums are the same on the way back as on the way there.
    const again = JSON.parse((await cli(["migrate", "--to", target.url, "--json"], home)).stdout) as typeof report;
    expect(again).toMatchObject({ ok: true, copied: 0, skipped: 4 });
    const sums = (value: typeof report) => value.sessions.map((session) => session.checksum).sort();
    expect(sums(again)).toEqual(sums(report));
  }, MANY_RUNS_MS);

  it("skips what is already there: a second run copies nothing and succeeds", async () => {
    const home = await sourceHome();
    const target = newTarget();
    expect((await cli(["migrate", "--to", target.url], home)).code).toBe(0);
    const second = await cli(["migrate", "--to", target.url], home);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(new RegExp(`skipped +${EXAMPLE_ID} "Stateless auth": identical on the target`));
    expect(second.stdout).toMatch(/^ {2}copied +0/m);
    expect(second.stdout).toMatch(/^ {2}skipped +4 +\(already on the target, identical\)$/m);
  }, MANY_RUNS_MS);

  it("reports a session that differs on the target as a conflict and leaves it; --overwrite replaces it", async () => {
    const home = await sourceHome();
    const target = newTarget();
    expect((await cli(["migrate", "--to", target.url], home)).code).toBe(0);
    const renamed = await cli(["rename", PI_V3_ID, "continued on the target"], home, target.env);
    expect(renamed.code, renamed.stderr).toBe(0);
    const onTarget = await contents(home, target.env);

    const conflict = await cli(["migrate", "--to", target.url], home);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(
      new RegExp(`conflict +${PI_V3_ID} "API rate limiting": differs on the target, left alone: (\\d+) entries on the source, \\d+ on the target: the target has 1 more after the same \\1 \\(it was continued there\\)`),
    );
    expect(conflict.stdout).toMatch(/^ {2}conflicts +1 +\(differ on the target, left alone\)$/m);
    expect(conflict.stdout).toContain("run the same command with --overwrite");
    expect(await contents(home, target.env)).toEqual(onTarget);

    const overwrite = await cli(["migrate", "--to", target.url, "--overwrite"], home);
    expect(overwrite.code, overwrite.stderr).toBe(0);
    expect(overwrite.stderr).toMatch(new RegExp(`copied +${PI_V3_ID}.*replacing the target's`));
    expect(await contents(home, target.env)).toEqual(await contents(home));
  }, MANY_RUNS_MS);

  it("resumes a run killed in the middle of a session: copies what is missing, duplicates nothing", async () => {
    const home = await sourceHome();
    const target = newTarget();
    // Sessions 1 and 2 are copied, session 3 is half written when the process is killed.
    const stuck = spawn(process.execPath, [join(import.meta.dirname, "support", "migrate-stuck.mjs"), join(home, "sessions.db"), target.url, "3", "2"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      stuck.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("stuck") && resolve());
      stuck.once("exit", (code) => reject(new Error(`the stuck run ended by itself (${code})`)));
    });
    stuck.kill("SIGKILL");
    await new Promise((resolve) => stuck.once("close", resolve));
    expect(await sessionIds(home, target.env)).toHaveLength(2);

    const resumed = await cli(["migrate", "--to", target.url, "--json"], home);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ ok: true, copied: 2, skipped: 2, conflicts: 0, failed: 0 });
    expect(await contents(home, target.env)).toEqual(await contents(home));
  }, MANY_RUNS_MS);

  describe("bad input: a clear message, the usual exit status, nothing touched", () => {
    /** The source file's bytes and its folder's listing, to show a refused run left them alone. */
    const fingerprint = (home: string) => ({
      files: readdirSync(home).sort(),
      bytes: createHash("sha256").update(readFileSync(join(home, "sessions.db"))).digest("hex"),
    });

    it("refuses wrong arguments with exit status 2", async () => {
      const home = await sourceHome();
      const before = fingerprint(home);
      const cases: [string[], RegExp][] = [
        [["migrate"], /give either --to <url> or --from <url>/],
        [["migrate", "--to", "postgres://a/b", "--from", "postgres://a/b"], /give either --to <url> or --from <url>/],
        [["migrate", "--to", "mysql://me:secret@db/x"], /--to: unknown scheme "mysql:" in "mysql:\/\/me:\*\*\*@db\/x": give a postgres:\/\/ URL/],
        [["migrate", "--from", "not a url"], /--from "not a url" is not a URL/],
        [["migrate", "--to", pathToFileURL(join(home, "sessions.db")).href], /the source and the target are the same database/],
      ];
      for (const [args, message] of cases) {
        const run = await cli(args, home);
        expect(run.code, args.join(" ")).toBe(2);
        expect(run.stderr).toMatch(message);
        expect(run.stderr).not.toContain("secret");
        expect(run.stderr).not.toMatch(/^\s+at /m);
      }
      expect(fingerprint(home)).toEqual(before);
    });

    it("fails with exit status 1 on a missing SQLite file, creating nothing", async () => {
      const home = dirs.make();
      const target = newTarget();
      const run = await cli(["migrate", "--db", join(home, "missing.db"), "--to", target.url], home);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`no such database file: ${join(home, "missing.db")}`);
      expect(existsSync(join(home, "missing.db"))).toBe(false);
    });

    it("fails with exit status 1 when the server cannot be reached, without opening the source, the password hidden", async () => {
      const home = await sourceHome();
      const before = fingerprint(home);
      // Port 9 (discard) on loopback: nothing listens there.
      const run = await cli(["migrate", "--to", "postgres://me:hunter2@127.0.0.1:9/base_context"], home);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("postgres://me:***@127.0.0.1:9/base_context");
      expect(run.stderr).not.toContain("hunter2");
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(fingerprint(home)).toEqual(before);
    });
  });
});
