/**
 * `pnpm demo` (scripts/demo.mjs): writes into a home of its own under the system's temporary
 * folder, never the user's ~/.base-context, says where, and gives the same first compaction at
 * every run (the second run imports the file afresh: no pile of copies of the sample session); the
 * commands it suggests work when pasted.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { tempDirs } from "./support/temp-dir.js";

const run = promisify(execFile);
const DEMO = join(import.meta.dirname, "..", "scripts", "demo.mjs");
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

describe("pnpm demo", () => {
  it("runs in its own home under the temporary folder, says so, and shows the same compaction each run", { timeout: 120_000 }, async () => {
    const userHome = dirs.make("bc-demo-user-");
    const temporary = dirs.make("bc-demo-tmp-");
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: userHome, TMPDIR: temporary };
    delete env.BASE_CONTEXT_HOME;
    delete env.OPENAI_API_KEY;
    const first = await run(process.execPath, [DEMO], { env });
    const second = await run(process.execPath, [DEMO], { env });
    const demoHome = join(temporary, "base-context-demo");
    for (const output of [first.stdout, second.stdout]) {
      expect(output).toContain(`Demo home: ${demoHome}`);
      expect(output).toContain("Imported");
      expect(output).not.toContain("imported before");
      expect(output).toMatch(/Summarizer\s+extractive/);
    }
    expect(existsSync(join(demoHome, "sessions.db"))).toBe(true);
    expect(existsSync(join(userHome, ".base-context"))).toBe(false);

    // Each hint works as printed, pasted into a shell that has no BASE_CONTEXT_HOME, from the clone's root.
    const hints = second.stdout
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => /^(?:BASE_CONTEXT_HOME=\S+ )?node \S+ (?:show|tree|doctor|compact)\b/.test(line));
    expect(hints.length).toBeGreaterThanOrEqual(4);
    for (const hint of hints) {
      // A terminal's tree picker is the printed tree here (stdout is a pipe); the compaction again has no model to ask.
      const pasted = await run("/bin/sh", ["-c", hint.replace('"focus on …"', '"focus on the tokens"')], { env, cwd: join(import.meta.dirname, "..") });
      expect(pasted.stderr, hint).not.toMatch(/no session with id/);
    }
    expect(existsSync(join(userHome, ".base-context"))).toBe(false);
  });
});
