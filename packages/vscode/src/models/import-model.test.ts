import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { DAEMON_BIN } from "../../../../test/support/daemon.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { importAllOutcome, parseImportAllReport } from "./import-model.js";

const TRANSCRIPT = fileURLToPath(
  new URL("../../../daemon/src/sessions/fixtures/claude-code/1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0.jsonl", import.meta.url),
);
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** `base-context import --all claude-code --json`, as the extension runs it; its stdout whatever the exit code. */
async function importAll(home: string, claude: string): Promise<string> {
  const env = { ...process.env, BASE_CONTEXT_HOME: home, CLAUDE_CONFIG_DIR: claude };
  try {
    return (await promisify(execFile)(process.execPath, [DAEMON_BIN, "import", "--all", "claude-code", "--json"], { env })).stdout;
  } catch (error) {
    return (error as { stdout: string }).stdout;
  }
}

describe("importAllOutcome, on the command line's own report", () => {
  it("counts imported, failed, then unchanged files, and lists each failure", { timeout: 30_000 }, async () => {
    const home = dirs.make("bc-import-all-");
    const claude = dirs.make("bc-claude-");
    const project = join(claude, "projects", "-home-me-app");
    mkdirSync(project, { recursive: true });
    copyFileSync(TRANSCRIPT, join(project, "1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0.jsonl"));
    writeFileSync(join(project, "broken.jsonl"), "not json at all\n");

    const first = parseImportAllReport(await importAll(home, claude));
    expect(first).toBeDefined();
    const outcome = importAllOutcome("Claude Code", first!);
    expect(outcome.level).toBe("warning");
    expect(outcome.message).toMatch(/: 1 imported, 0 brought up to date, 0 unchanged, 1 failed \(see the log\); [\d,]+ entries added\.$/);
    expect(outcome.message.startsWith(`2 Claude Code session files in ${join(claude, "projects")}: `)).toBe(true);
    expect(outcome.failures).toHaveLength(1);
    expect(outcome.failures[0]).toMatch(/broken\.jsonl: /);

    const again = importAllOutcome("Claude Code", parseImportAllReport(await importAll(home, claude))!);
    expect(again.message).toContain(": 0 imported, 0 brought up to date, 1 unchanged, 1 failed (see the log); 0 entries added.");
  });

  it("is no report when the command printed something else", () => {
    expect(parseImportAllReport("")).toBeUndefined();
    expect(parseImportAllReport('{"sessions": []}')).toBeUndefined();
  });
});
