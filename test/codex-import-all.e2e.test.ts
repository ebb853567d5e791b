/**
 * `base-context import --all codex` as a user runs it: every rollout under CODEX_HOME/sessions
 * (or ~/.codex/sessions), with progress, then again after Codex appended to one of them: only
 * that one gets new entries.
 */
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const FIXTURE = fileURLToPath(new URL("../packages/daemon/src/sessions/formats/codex/fixtures/codex-rollout.jsonl", import.meta.url));
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** A second session: the fixture's first lines under another id. */
function otherSession(path: string): void {
  const lines = readFileSync(FIXTURE, "utf8").trim().split("\n").slice(0, 12);
  lines[0] = lines[0]!.replace("7f9f9a2e-1b3c-4f5d-8e7a-000000000001", "7f9f9a2e-1b3c-4f5d-8e7a-000000000002");
  writeFileSync(path, `${lines.join("\n")}\n`);
}

interface AllReport {
  folder: string;
  files: { path: string; sessionId: string; updated: boolean; addedEntries: number; entryCount: number }[];
}

describe("base-context import --all codex", () => {
  it("imports every rollout with progress, then only what Codex appended", async () => {
    const root = dirs.make("bc-codex-all-");
    const codexHome = join(root, "codex");
    const day1 = join(codexHome, "sessions", "2026", "05", "02");
    const day2 = join(codexHome, "sessions", "2026", "05", "03");
    mkdirSync(day1, { recursive: true });
    mkdirSync(day2, { recursive: true });
    const first = join(day1, "rollout-2026-05-02T10-00-00-7f9f9a2e-1b3c-4f5d-8e7a-000000000001.jsonl");
    const second = join(day2, "rollout-2026-05-03T09-00-00-7f9f9a2e-1b3c-4f5d-8e7a-000000000002.jsonl");
    copyFileSync(FIXTURE, first);
    otherSession(second);
    const home = join(root, "bc-home");
    const env = { CODEX_HOME: codexHome };

    const run = await runCli(["import", "--all", "codex"], { home, env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/2 codex session files in .*: 2 imported, 0 updated, 0 unchanged \(\d+ entries added\)/);
    // Progress on stderr, one line per file (not a terminal), oldest first.
    expect(run.stderr).toMatch(/\[1\/2\] 2026\/05\/02\/rollout-.*: imported, \d+ entries\n\[2\/2\] 2026\/05\/03\/rollout-/);

    appendFileSync(
      second,
      `${JSON.stringify({
        timestamp: "2026-05-03T09:05:00Z",
        type: "response_item",
        payload: { type: "message", role: "user", content: [{ type: "input_text", text: "One more thing: rename total to cartTotal." }] },
      })}\n`,
    );
    const again = await runCli(["import", "--all", "codex", "--json"], { home, env, timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout) as AllReport;
    expect(report.folder).toBe(join(codexHome, "sessions"));
    expect(report.files.map((file) => [file.sessionId, file.updated, file.addedEntries])).toEqual([
      ["7f9f9a2e-1b3c-4f5d-8e7a-000000000001", true, 0],
      ["7f9f9a2e-1b3c-4f5d-8e7a-000000000002", true, 1],
    ]);

    const search = await runCli(["sessions", "cartTotal"], { home });
    expect(search.stdout).toContain("7f9f9a2e-1b3c-4f5d-8e7a-000000000002");
  }, 120_000);

  it("reads ~/.codex/sessions without CODEX_HOME, and says where it looked when there is none", async () => {
    const root = dirs.make("bc-codex-home-");
    const home = join(root, "bc-home");
    const missing = await runCli(["import", "--all", "codex"], { home, env: { HOME: root, CODEX_HOME: undefined } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("~/.codex/sessions does not exist");
    expect(missing.stderr).toContain("CODEX_HOME");

    const day = join(root, ".codex", "sessions", "2026", "05", "02");
    mkdirSync(day, { recursive: true });
    copyFileSync(FIXTURE, join(day, "rollout-2026-05-02T10-00-00-7f9f9a2e-1b3c-4f5d-8e7a-000000000001.jsonl"));
    const run = await runCli(["import", "--all", "codex"], { home, env: { HOME: root, CODEX_HOME: undefined } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/1 codex session file in .*: 1 imported/);
  }, 60_000);
});
