/**
 * better-sqlite3's native addon built for another Node (a preload makes its load fail with Node's
 * own NODE_MODULE_VERSION error): the CLI, `doctor` and the daemon say so and how to rebuild it,
 * instead of calling the database damaged and suggesting to move it away. The file is untouched.
 */
import { SessionList } from "@base-context/protocol";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { startDaemon } from "./support/daemon.js";
import { onPostgres } from "./support/engine.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";
import { withNodeOptions } from "./support/test-node.js";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const PRELOAD = fileURLToPath(new URL("./support/sqlite-addon-other-abi.cjs", import.meta.url));
const OTHER_ABI = { NODE_OPTIONS: withNodeOptions(`--require ${PRELOAD}`) };
const EXAMPLE = fileURLToPath(new URL("../packages/daemon/src/sessions/fixtures/pi-v3.jsonl", import.meta.url));

/** What every report of it says: the driver, which Node, the file is fine, the rebuild command and where. */
function expectAddonReport(text: string): void {
  expect(text).toMatch(/better-sqlite3's native addon was built for Node \d+ \(NODE_MODULE_VERSION \d+\), but this is Node v\d+/);
  expect(text).toContain("The session database is not affected.");
  expect(text).toMatch(/Rebuild the addon with this Node first on PATH \(.+, v\d+\.\d+\.\d+\): cd ".+" && npx --yes pnpm@10\.34\.9 rebuild -r better-sqlite3/);
  expect(text).not.toMatch(/damaged|not a Base Context database|\bmv "/);
}

// About the SQLite driver: on PostgreSQL the addon is never loaded.
describe.skipIf(onPostgres)("better-sqlite3's addon built for another Node", () => {
  it("the CLI says so and how to rebuild it, exit 1, and leaves the database file as it was", async () => {
    const home = dirs.make("bc-addon-abi-");
    const imported = await runCli(["import", EXAMPLE], { home });
    expect(imported.code, imported.stderr).toBe(0);
    const database = readFileSync(join(home, "sessions.db"));

    const listed = await runCli(["sessions"], { home, env: OTHER_ABI });
    expect(listed.code).toBe(1);
    expect(listed.stdout).toBe("");
    expectAddonReport(listed.stderr);
    expect(readFileSync(join(home, "sessions.db")).equals(database)).toBe(true);

    const doctor = await runCli(["doctor"], { home, env: OTHER_ABI, timeoutMs: 60_000 });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/fail\s+database\s+cannot open the session database/);
    expectAddonReport(doctor.stdout);
  }, 120_000);

  it("doctor reports it before there is a database file, where it checked nothing before", async () => {
    const doctor = await runCli(["doctor"], { home: dirs.make("bc-addon-abi-empty-"), env: OTHER_ABI, timeoutMs: 60_000 });
    expect(doctor.code).toBe(1);
    expectAddonReport(doctor.stdout);
  }, 60_000);

  it("the daemon answers requests with request_failed saying so, the rebuild as the hint", async () => {
    const daemon = await startDaemon({ env: OTHER_ABI });
    try {
      const failure = await daemon.client.request(SessionList, {}).then(
        () => undefined,
        (error: unknown) => error as { code: number; message: string; data: { code: string; hint: string; databasePath: string } },
      );
      expect(failure).toMatchObject({ code: -32803, data: { code: "request_failed", databasePath: join(daemon.home, "sessions.db") } });
      expectAddonReport(`${failure!.message}\n${failure!.data.hint}`);
    } finally {
      await daemon.close();
    }
  }, 60_000);
});
