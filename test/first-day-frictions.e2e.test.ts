/**
 * What a new user trips on in the first hour with the CLI, each mended and checked with the built
 * command: a compaction tried without writing it (`compact --dry-run`, plugins included); a
 * project's plugin that does not run for a session says so (the log, `plugins --session`,
 * `doctor`); help that says what is true; a tree header that never cuts its counts; `export -o`
 * into a folder that does not exist names that folder. (The demo's hints: demo.e2e.test.ts.)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hookPlugin, replaceSummary, writePlugin } from "./support/plugins.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const EXAMPLE = join(import.meta.dirname, "..", "examples", "sessions", "refactor-auth.jsonl");
const EXAMPLE_ID = "5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13";

/** A home with the example session imported, its folder (`cwd`) set to `cwd`. */
async function homeWithSession(cwd?: string): Promise<string> {
  const home = dirs.make("bc-first-day-");
  const file = join(home, "session.jsonl");
  writeFileSync(file, cwd === undefined ? readFileSync(EXAMPLE) : readFileSync(EXAMPLE, "utf8").replace('"cwd":"/srv/api"', `"cwd":${JSON.stringify(cwd)}`));
  expect((await runCli(["import", file], { home })).code).toBe(0);
  return home;
}

const compactionsOf = async (home: string) =>
  (await runCli(["tree", EXAMPLE_ID, "--print", "--filter", "summaries", "--width", "300"], { home })).stdout.split("\n").filter((line) => line.includes("[compaction]"));

describe("compact --dry-run", () => {
  it("runs the summarizer chain, plugins included, and prints the summary and its retention, writing nothing", async () => {
    const home = await homeWithSession();
    const plain = await runCli(["compact", EXAMPLE_ID, "--dry-run"], { home });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^Dry run of a compaction of session 5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13: nothing was written\./);
    expect(plain.stdout).toMatch(/\nSummarizer {2}extractive\n/);
    expect(plain.stdout).toMatch(/\nRetention {3}kept \d+\/\d+ files, /);
    expect(plain.stdout).toContain("## Goal");
    // A plugin's summary is what a compaction would write: tried as often as its author likes.
    writePlugin(join(home, "plugins"), "mine", hookPlugin({ compact: replaceSummary("## Goal\nwritten by the plugin") }));
    for (let run = 0; run < 2; run++) {
      const json = await runCli(["compact", EXAMPLE_ID, "--dry-run", "--json"], { home });
      expect(json.code, json.stderr).toBe(0);
      const report = JSON.parse(json.stdout) as {
        dryRun: boolean;
        result: { status: string; summarizer: string; summary: string; retention: unknown };
      };
      expect(report).toMatchObject({ dryRun: true, result: { status: "summarized", summarizer: "plugin:global:mine" } });
      expect(report.result.summary).toMatch(/^## Goal\nwritten by the plugin/);
      expect(report.result.retention).toBeDefined();
    }
    expect(await compactionsOf(home)).toEqual([]);
    // The same command without --dry-run writes it.
    expect((await runCli(["compact", EXAMPLE_ID], { home })).code).toBe(0);
    expect(await compactionsOf(home)).toHaveLength(1);
  }, 120_000);
});

describe("a project's plugin that does not run for a session", () => {
  it("is said in the log, in plugins --session and in doctor, with why", async () => {
    const project = dirs.make("bc-first-day-project-");
    mkdirSync(join(project, "packages", "app"), { recursive: true });
    const plugins = join(project, ".base-context", "plugins");
    writePlugin(plugins, "mine", hookPlugin({ compact: replaceSummary("## Goal\nby the project's plugin") }));
    // The session was started in a subfolder of the project.
    const home = await homeWithSession(join(project, "packages", "app"));
    expect((await runCli(["plugins", "trust", project], { home })).code).toBe(0);

    const compacted = await runCli(["compact", EXAMPLE_ID, "--dry-run"], { home, cwd: project });
    expect(compacted.code, compacted.stderr).toBe(0);
    expect(compacted.stdout).toMatch(/\nSummarizer {2}extractive\n/);
    expect(compacted.stderr).toMatch(/plugin project:mine@\S+ does not run \(session_before_compact\) for this session: the session's folder \S+packages\/app is inside the project/);

    const listed = await runCli(["plugins", "--session", "5b0c"], { home, cwd: project });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/RUNS FOR\s+SESSION 5b0c2f4e/);
    expect(listed.stdout).toMatch(/mine\s+project\s+active.*sessions in \S+\s+does not run/);
    expect(listed.stdout).toMatch(/mine does not run for session 5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13: the session's folder .* is inside the project/);
    const json = JSON.parse((await runCli(["plugins", "--session", "5b0c", "--json"], { home, cwd: project })).stdout) as {
      plugins: { name: string; forSession: { applies: boolean; why?: string } }[];
    };
    expect(json.plugins.find((plugin) => plugin.name === "mine")?.forSession).toMatchObject({
      applies: false,
      why: expect.stringContaining("inside the project"),
    });

    const doctor = await runCli(["doctor", "--offline"], { home, cwd: project });
    expect(doctor.stdout).toMatch(/warn\s+project plugins\s+the plugins of \S+ \(mine\) do not run for 1 session started in its subfolders/);
    expect(doctor.stdout).toContain("put the plugin in the global folder");
  }, 120_000);
});

describe("help, headers and messages that say what is true", () => {
  it("names every format the import reads, cuts the tree header's folder rather than its counts, and names the missing folder of export -o", async () => {
    const home = await homeWithSession();
    const help = await runCli(["--help"], { home });
    expect(help.stdout).toMatch(/\n {2}import +import a session file: pi's \(versions 1–3\), Claude Code's or Codex's/);
    const importHelp = await runCli(["import", "--help"], { home });
    expect(importHelp.stdout).not.toMatch(/a pi session file/);
    expect(importHelp.stdout).toMatch(/Claude Code's or Codex's/);

    for (const width of [40, 60, 72, 100]) {
      const tree = await runCli(["tree", EXAMPLE_ID, "--print", "--filter", "user", "--width", String(width)], { home });
      const header = tree.stdout.split("\n").slice(0, 2).join("\n");
      expect(header, `width ${width}`).toMatch(/\b6 entries shown of 69$/m);
      for (const line of header.split("\n")) expect(line.length, `width ${width}`).toBeLessThanOrEqual(width);
    }

    const missing = join(home, "no-such-folder", "out.jsonl");
    const exported = await runCli(["export", EXAMPLE_ID, "-o", missing], { home });
    expect(exported.code).toBe(1);
    expect(exported.stderr).toContain(`cannot write ${missing}: its folder ${join(home, "no-such-folder")} does not exist`);
    expect(exported.stderr).not.toMatch(/\.tmp/);
  }, 120_000);
});
