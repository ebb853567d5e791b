/**
 * `base-context import --all claude-code`: every transcript under CLAUDE_CONFIG_DIR/projects
 * (the fixtures written from the format's description: a session and its subagent's file),
 * progress on stderr, and the runs after it: nothing new, then one new line.
 */
import { appendFileSync, cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const FIXTURES = fileURLToPath(new URL("../packages/daemon/src/sessions/fixtures/claude-code/", import.meta.url));
const SESSION = "1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

describe("base-context import --all claude-code", () => {
  it("imports every transcript with progress, then adds only what is new", async () => {
    const home = dirs.make("bc-import-all-");
    const config = dirs.make("bc-claude-config-");
    const project = join(config, "projects", "-home-dev-shop");
    mkdirSync(project, { recursive: true });
    cpSync(FIXTURES, project, { recursive: true });
    const env = { CLAUDE_CONFIG_DIR: config };

    const first = await runCli(["import", "--all", "claude-code"], { home, env });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("2 claude-code session files in");
    expect(first.stdout).toMatch(/2 imported, 0 updated, 0 unchanged \(\d+ entries added\)/);
    expect(first.stderr).toContain(`[1/2] -home-dev-shop/${SESSION}.jsonl: imported`);
    expect(first.stderr).toContain(`[2/2] -home-dev-shop/${SESSION}/subagents/agent-a7c1e9f.jsonl: imported, 4 entries`);

    const again = await runCli(["import", "--all", "claude-code", "--json"], { home, env });
    expect(again.code).toBe(0);
    const report = JSON.parse(again.stdout) as { files: { sessionId: string; updated: boolean; addedEntries: number }[] };
    expect(report.files.map((file) => [file.sessionId, file.updated, file.addedEntries])).toEqual([
      [SESSION, true, 0],
      [`agent-a7c1e9f.${SESSION}`, true, 0],
    ]);

    appendFileSync(
      join(project, `${SESSION}.jsonl`),
      `${JSON.stringify({
        parentUuid: "00000000-0000-4000-8000-000000000035",
        isSidechain: false,
        cwd: "/home/dev/shop",
        sessionId: SESSION,
        type: "user",
        message: { role: "user", content: "Thanks, ship it." },
        uuid: "00000000-0000-4000-8000-000000000036",
        timestamp: "2026-03-01T11:00:00.000Z",
      })}\n`,
    );
    const third = await runCli(["import", "--all", "claude-code"], { home, env });
    expect(third.stdout).toMatch(/0 imported, 1 updated, 1 unchanged \(1 entry added\)/);
    const show = await runCli(["show", SESSION], { home });
    expect(show.stdout).toContain("Thanks, ship it.");
  }, 120_000);

  it("says where it looked when the folder is missing, and refuses an agent it does not know", async () => {
    const home = dirs.make("bc-import-all-");
    const missing = await runCli(["import", "--all", "claude-code"], { home, env: { CLAUDE_CONFIG_DIR: join(home, "nowhere") } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no claude-code sessions: .*nowhere\/projects does not exist/);
    const unknown = await runCli(["import", "--all", "cursor"], { home });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--all takes one of claude-code\b.*, not "cursor"/);
  }, 60_000);
});
