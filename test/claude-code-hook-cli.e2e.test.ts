/**
 * `base-context claude-code`: install / uninstall merge Base Context's three hook entries into
 * Claude Code's settings (CLAUDE_CONFIG_DIR's, or a project's) without touching anything else,
 * doctor says where they are; and the hook never blocks Claude Code: a broken transcript path, a
 * home it cannot open, input that is not the hook's JSON, and a 10 MB transcript each end with
 * exit status 0 and nothing but the hook's answer on stdout. (The hook against the real Claude
 * Code: claude-code-hooks.e2e.test.ts.)
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** bench/lib's generator of Claude Code transcripts (plain JavaScript, shared with the hook's bench). */
interface TranscriptState {
  sessionId: string;
  turns: number;
  written: number;
}
const generatorPath = "../bench/lib/claude-code-transcript.mjs";
const generator = (await import(generatorPath)) as {
  writeClaudeTranscript(path: string, options: { bytes: number; compactAtEnd?: boolean; sessionId?: string }): TranscriptState;
  appendCompaction(state: TranscriptState): void;
  appendTurns(state: TranscriptState, count: number): void;
  appendUserLine(state: TranscriptState, content: unknown): void;
};

const OTHER_HOOKS = {
  PreCompact: [{ matcher: "auto", hooks: [{ type: "command", command: "/usr/local/bin/save-notes" }] }],
  PostToolUse: [{ matcher: "Edit", hooks: [{ type: "command", command: "prettier --write" }] }],
};

type ClaudeSettings = {
  model: string;
  hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ command: string; timeout?: number }> }>>;
};
type DoctorReport = { checks: Array<{ name: string; status: string; summary: string }> };

function hookInput(transcript: string, event: "PreCompact" | "SessionStart"): string {
  return JSON.stringify({
    session_id: "5e551011-0000-4000-8000-000000000001",
    transcript_path: transcript,
    cwd: "/srv/app",
    hook_event_name: event,
    ...(event === "PreCompact" ? { trigger: "manual", custom_instructions: null } : { source: "compact" }),
  });
}

describe("base-context claude-code install / uninstall / status", () => {
  it("merges its two entries into CLAUDE_CONFIG_DIR's settings beside other hooks, and removes only them", async () => {
    const home = dirs.make("bc-cc-home-");
    const config = dirs.make("bc-cc-config-");
    const env = { CLAUDE_CONFIG_DIR: config };
    const settingsFile = join(config, "settings.json");
    writeFileSync(settingsFile, JSON.stringify({ model: "opus", hooks: OTHER_HOOKS }, null, 2));

    const installed = await runCli(["claude-code", "install"], { home, env });
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain(settingsFile);
    const settings = JSON.parse(readFileSync(settingsFile, "utf8")) as ClaudeSettings;
    expect(settings.model).toBe("opus");
    expect(settings.hooks.PostToolUse).toEqual(OTHER_HOOKS.PostToolUse);
    expect(settings.hooks.PreCompact![0]).toEqual(OTHER_HOOKS.PreCompact[0]);
    const ours = settings.hooks.PreCompact![1]!;
    expect(ours.matcher).toBeUndefined();
    expect(ours.hooks[0]!.command).toMatch(/base-context\.js claude-code hook$/);
    expect(ours.hooks[0]!.timeout).toBe(30);
    expect(settings.hooks.SessionStart).toEqual([{ matcher: "compact", hooks: [ours.hooks[0]] }]);
    expect(settings.hooks.PostCompact).toEqual([{ hooks: [ours.hooks[0]] }]);

    // Twice is the same as once: the entries are replaced, not added again.
    expect((await runCli(["claude-code", "install"], { home, env })).code).toBe(0);
    expect(JSON.parse(readFileSync(settingsFile, "utf8"))).toEqual(settings);
    const status = await runCli(["claude-code", "status", "--json"], { home, env });
    expect(JSON.parse(status.stdout)).toMatchObject({
      settings: settingsFile,
      installed: true,
      hooks: [{ event: "PreCompact" }, { event: "SessionStart" }, { event: "PostCompact" }],
    });
    const doctor = await runCli(["doctor", "--offline", "--json"], { home, env });
    const check = (JSON.parse(doctor.stdout) as DoctorReport).checks.find((c) => c.name === "claude code");
    expect(check).toMatchObject({ status: "ok", summary: expect.stringContaining("(PreCompact, SessionStart, PostCompact)") });

    const removed = await runCli(["claude-code", "uninstall"], { home, env });
    expect(removed.code).toBe(0);
    expect(JSON.parse(readFileSync(settingsFile, "utf8"))).toEqual({ model: "opus", hooks: OTHER_HOOKS });
    const again = await runCli(["claude-code", "uninstall"], { home, env });
    expect(again.stdout).toMatch(/nothing to remove/);
    const doctorAfter = await runCli(["doctor", "--offline", "--json"], { home, env });
    expect((JSON.parse(doctorAfter.stdout) as DoctorReport).checks.find((c) => c.name === "claude code")).toMatchObject({ status: "skip" });
  }, 60_000);

  it("installs into the project's .claude/settings.json with --project, and refuses a settings file that is not JSON", async () => {
    const home = dirs.make("bc-cc-home-");
    const project = dirs.make("bc-cc-project-");
    const env = { CLAUDE_CONFIG_DIR: join(project, "unused-config") };
    const installed = await runCli(["claude-code", "install", "--project"], { home, env, cwd: project });
    expect(installed.code).toBe(0);
    const file = join(project, ".claude", "settings.json");
    const settings = JSON.parse(readFileSync(file, "utf8")) as ClaudeSettings;
    expect(Object.keys(settings.hooks)).toEqual(["PreCompact", "SessionStart", "PostCompact"]);
    const removed = await runCli(["claude-code", "uninstall", "--project"], { home, env, cwd: project });
    expect(removed.code).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({});

    writeFileSync(file, "{ not json");
    const refused = await runCli(["claude-code", "install", "--project"], { home, env, cwd: project });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is not valid JSON .*left as it is/);
    expect(readFileSync(file, "utf8")).toBe("{ not json");
    const usage = await runCli(["claude-code", "reinstall"], { home, env });
    expect(usage.code).toBe(2);
  }, 60_000);
});

describe("base-context claude-code hook never blocks Claude Code", () => {
  it("exits 0 with nothing on stdout for a broken transcript path, a home it cannot open, and input that is not the hook's JSON", async () => {
    const home = dirs.make("bc-cc-home-");
    const missing = join(home, "no-such-transcript.jsonl");
    const broken = await runCli(["claude-code", "hook"], { home, input: hookInput(missing, "PreCompact") });
    expect(broken).toMatchObject({ code: 0, stdout: "" });
    expect(broken.stderr).toMatch(/cannot read the transcript .*no-such-transcript\.jsonl: ENOENT/);
    const folder = await runCli(["claude-code", "hook"], { home, input: hookInput(home, "SessionStart") });
    expect(folder).toMatchObject({ code: 0, stdout: "" });
    expect(folder.stderr).toMatch(/is not a file/);

    const transcript = join(home, "small.jsonl");
    generator.writeClaudeTranscript(transcript, { bytes: 20_000 });
    // The home is under a regular file: it cannot be created, the database cannot be opened.
    const file = join(home, "a-file");
    writeFileSync(file, "");
    const noHome = await runCli(["claude-code", "hook"], { home: join(file, "home"), input: hookInput(transcript, "PreCompact") });
    expect(noHome).toMatchObject({ code: 0, stdout: "" });
    expect(noHome.stderr).toMatch(/base-context claude-code hook: .*a-file\/home/);

    for (const input of ["", "not json", "[1, 2]", JSON.stringify({ hook_event_name: "Stop", transcript_path: transcript })]) {
      const bad = await runCli(["claude-code", "hook"], { home, input });
      expect(bad).toMatchObject({ code: 0, stdout: "" });
      expect(bad.stderr).toMatch(/^base-context claude-code hook: .*\(Claude Code goes on without it\)\n$/);
    }
    // A SessionStart of another kind (startup, resume) is not its business: no answer, nothing said.
    const startup = await runCli(["claude-code", "hook"], {
      home,
      input: JSON.stringify({ hook_event_name: "SessionStart", source: "startup", transcript_path: transcript }),
    });
    expect(startup).toMatchObject({ code: 0, stdout: "", stderr: "" });
  }, 120_000);

  it("answers both events on a 10 MB transcript, and its stdout is the hook's answer only", async () => {
    const home = dirs.make("bc-cc-home-");
    const transcript = join(home, "big.jsonl");
    const state = generator.writeClaudeTranscript(transcript, { bytes: 10_000_000 });
    expect(state.written).toBeGreaterThanOrEqual(10_000_000);
    // Imported first, without a deadline: how long a first import of 10 MB takes depends on the
    // machine's load, and the hook gives up after its own deadline (the test below).
    expect((await runCli(["import", transcript], { home, timeoutMs: 180_000 })).code).toBe(0);
    generator.appendTurns(state, 1);
    const pre = await runCli(["claude-code", "hook"], { home, input: hookInput(transcript, "PreCompact"), timeoutMs: 180_000 });
    expect(pre).toMatchObject({ code: 0, stderr: "" });
    const instructions = pre.stdout.trimEnd();
    expect(instructions).toMatch(/^Base Context read this session's transcript\. Keep each of these in the summary/);
    // The user's constraint first, then the errors still standing, by their exact first lines, within the budget.
    expect(instructions.split("\n")[1]).toBe("- User constraint: Never edit the generated files.");
    expect(instructions).toContain("- Error (npm test -- case0): `Error: case 0 expected 2, received 1`");
    expect(instructions.length).toBeLessThanOrEqual(2000);
    expect(instructions).toMatch(/\(\d+ more not listed\)$/);

    // Claude Code compacts: its summary keeps the constraint and drops the errors.
    generator.appendCompaction(state);
    const after = await runCli(["claude-code", "hook"], { home, input: hookInput(transcript, "SessionStart"), timeoutMs: 180_000 });
    expect(after).toMatchObject({ code: 0, stderr: "" });
    const answer = JSON.parse(after.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(answer.hookSpecificOutput.hookEventName).toBe("SessionStart");
    const context = answer.hookSpecificOutput.additionalContext;
    expect(context).toMatch(/^Claude Code's summary of the earlier conversation left these out\./);
    expect(context).toContain("- Error (npm test -- case0): `Error: case 0 expected 2, received 1`");
    expect(context).not.toContain("Never edit the generated files");
    // Within its budget, and it says how much more there was.
    expect(context.length).toBeLessThanOrEqual(4000);
    expect(context).toMatch(/\(\d+ more not listed\)$/);
    const show = await runCli(["show", state.sessionId], { home });
    expect(show.stdout).toMatch(/\(Claude Code's summary\): kept .*0\/\d+ errors, 1\/1 constraints/);
  }, 400_000);

  it("exits 0 within its 20 s with a home under /proc, and when a system call never returns (a settings file that is a FIFO)", async () => {
    const home = dirs.make("bc-cc-home-");
    const transcript = join(home, "small.jsonl");
    generator.writeClaudeTranscript(transcript, { bytes: 20_000 });
    const proc = await timed(() => runCli(["claude-code", "hook"], { home: "/proc/nope", input: hookInput(transcript, "PreCompact") }));
    expect(proc.run).toMatchObject({ code: 0, stdout: "" });
    expect(proc.run.stderr).toMatch(/cannot use the Base Context home \/proc\/nope: \/proc is the kernel's process file system \(procfs\)/);
    expect(proc.ms).toBeLessThan(20_000);
    // Opening a FIFO nobody writes to blocks in open(2), on the main thread: no timer of its own can fire there.
    const stuck = dirs.make("bc-cc-home-");
    execFileSync("mkfifo", [join(stuck, "settings.json")]);
    const blocked = await timed(() =>
      runCli(["claude-code", "hook"], { home: stuck, input: hookInput(transcript, "PreCompact"), timeoutMs: 60_000 }),
    );
    expect(blocked.run).toMatchObject({ code: 0, stdout: "", stderr: "base-context claude-code hook: it did not end within 20 s (Claude Code goes on without it)\n" });
    expect(blocked.ms).toBeLessThan(20_000);
  }, 120_000);

  it("exits 0 within its 20 s on a 200 MB transcript of junk after a valid start", async () => {
    const home = dirs.make("bc-cc-home-");
    const transcript = join(home, "junk.jsonl");
    generator.writeClaudeTranscript(transcript, { bytes: 10_000 });
    const junk = `${randomBytes(3 << 20).toString("base64").replace(/(.{76})/g, "$1\n")}\n`;
    for (let written = 0; written < 200e6; written += junk.length) appendFileSync(transcript, junk);
    const run = await timed(() => runCli(["claude-code", "hook"], { home, input: hookInput(transcript, "PreCompact"), timeoutMs: 60_000 }));
    expect(run.run.code).toBe(0);
    expect(run.ms).toBeLessThan(20_000);
    // Whether it got through the junk in time depends on the machine: either it answered, or it said why not.
    if (run.run.stdout === "") expect(run.run.stderr).toMatch(/^base-context claude-code hook: .*(20 s|ran out).*\n$/);
    else expect(run.run.stdout).toMatch(/^Base Context read this session's transcript/);
    rmSync(transcript);
  }, 120_000);

  it("answers 10 runs at once on a session not imported yet: the later ones wait for the one importing", async () => {
    const home = dirs.make("bc-cc-home-");
    const transcript = join(home, "new.jsonl");
    generator.writeClaudeTranscript(transcript, { bytes: 300_000 });
    const runs = await Promise.all(
      Array.from({ length: 10 }, () => runCli(["claude-code", "hook"], { home, input: hookInput(transcript, "PreCompact"), timeoutMs: 60_000 })),
    );
    for (const run of runs) expect(run).toMatchObject({ code: 0, stderr: "" });
    const answers = new Set(runs.map((run) => run.stdout));
    expect([...answers]).toEqual([expect.stringMatching(/^Base Context read this session's transcript.*\n- User constraint: Never edit the generated files\./s)]);
  }, 120_000);

  it("reads on after a line too long to import (a 70 MB tool result): the lines after it are imported and the hook answers", async () => {
    const home = dirs.make("bc-cc-home-");
    const transcript = join(home, "long-line.jsonl");
    const state = generator.writeClaudeTranscript(transcript, { bytes: 50_000 });
    expect((await runCli(["claude-code", "hook"], { home, input: hookInput(transcript, "PreCompact") })).code).toBe(0);
    generator.appendUserLine(state, [{ type: "tool_result", tool_use_id: "toolu_big", content: "x".repeat(70_000_000) }]);
    generator.appendTurns(state, 1);
    const turn = state.turns - 1;
    for (let run = 0; run < 2; run++) {
      const pre = await runCli(["claude-code", "hook"], { home, input: hookInput(transcript, "PreCompact"), timeoutMs: 60_000 });
      expect(pre).toMatchObject({ code: 0, stderr: "" });
      // The turn after the long line is in the context the hook read: its failing test is an error still standing.
      expect(pre.stdout).toContain(`- Error (npm test -- case${turn}): \`Error: case ${turn} expected 2, received 1\``);
    }
    const tree = await runCli(["tree", state.sessionId, "--print", "--json"], { home });
    expect(tree.code).toBe(0);
  }, 180_000);
});

/** How long `run` took, from before it started to its end. */
async function timed<T>(run: () => Promise<T>): Promise<{ run: T; ms: number }> {
  const started = performance.now();
  const result = await run();
  return { run: result, ms: performance.now() - started };
}
