/**
 * `base-context compact` as a user runs it: the built CLI in its own process, on a temporary
 * BASE_CONTEXT_HOME, offline (extractive) or with the fake model.
 */
import { execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { DAEMON_MAIN } from "./support/daemon.js";
import { pathWithCli } from "./support/cli-on-path.js";
import { useFakeOpenAI } from "./support/fake-openai.js";
import { tempDirs } from "./support/temp-dir.js";
import { storeEnvFor } from "./support/engine.js";
import { TEST_NODE, testNodeEnv } from "./support/test-node.js";

const SAMPLE = fileURLToPath(new URL("../examples/sessions/refactor-auth.jsonl", import.meta.url));
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** The parts of `compact --json` these tests read. */
interface JsonReport {
  sessionId: string;
  status: string;
  summarizer?: string;
  imported?: { importedBefore?: boolean; entryCount: number };
  entry?: { type: string; customInstructions?: string; details?: { summarizer?: string; retention?: unknown } };
  stats?: { summarizedMessages: number; turnPrefixMessages: number; keptEntries: number };
  contextTokens: { before: number; after: number };
  retention?: unknown;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the CLI to its end (it must exit by itself: no open handles left behind). */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const started = Date.now();
  const home = env.BASE_CONTEXT_HOME ?? dirs.make("bc-cli-home-");
  const child = spawn(TEST_NODE, [DAEMON_MAIN, "compact", ...args], {
    env: { ...testNodeEnv(), PATH: pathWithCli(), BASE_CONTEXT_HOME: home, ...storeEnvFor(home), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`base-context compact did not exit within 20 s\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 20_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

describe("base-context compact, offline", () => {
  it("imports the sample session, compacts it with the extractive summarizer and says what happened", async () => {
    const home = dirs.make("bc-cli-home-");
    const run = await cli([SAMPLE], { BASE_CONTEXT_HOME: home });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Imported");
    expect(run.stdout).toContain("69 entries");
    expect(run.stdout).toMatch(/Context\s+[\d,]+ → [\d,]+ tokens \(\d+% smaller, counted with o200k_base\)/);
    expect(run.stdout).toMatch(/Estimate\s+[\d,]+ tokens before \(pi's estimate: /);
    expect(run.stdout).toMatch(/Summarizer\s+extractive \(built in, offline\)/);
    // What the summary kept of what it replaced: the demo's summary keeps everything.
    expect(run.stdout).toMatch(/Retention\s+kept (\d+)\/\1 files, (\d+)\/\2 errors, (\d+)\/\3 constraints/);
    expect(run.stdout).not.toMatch(/^Lost/m);
    expect(run.stdout).toMatch(/Session\s+5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13/);
    expect(run.stdout).toContain("base-context show 5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13");
    expect(run.stdout).toContain("to have a model write the summary, name it: summarizer.model");
    // Its hints name the settings file this run reads: BASE_CONTEXT_HOME's.
    expect(run.stdout.replace(/\s+/g, " ")).toContain(join(home, "settings.json"));
    expect(run.stdout).not.toContain("~/.base-context");
    expect(run.stdout).not.toContain("export OPENAI_API_KEY=");
    // Not a terminal: no colour codes, no spinner.
    expect(run.stdout).not.toContain("\u001b[");
  });

  it("show prints what the compaction in force kept", async () => {
    const home = dirs.make("bc-cli-home-");
    expect((await cli([SAMPLE], { BASE_CONTEXT_HOME: home })).code).toBe(0);
    const shown = execFileSync(TEST_NODE, [DAEMON_MAIN, "show", "5b0c2f4e", "--brief"], {
      env: { ...testNodeEnv(), PATH: process.env.PATH ?? "", BASE_CONTEXT_HOME: home, ...storeEnvFor(home) },
      encoding: "utf8",
    });
    expect(shown).toMatch(/^compaction \w+: kept (\d+)\/\1 files, (\d+)\/\2 errors/m);
  });

  it("prints one JSON object with --json; fewer recent tokens kept summarizes more", async () => {
    const first = await cli([SAMPLE, "--json"], { BASE_CONTEXT_HOME: dirs.make("bc-cli-home-") });
    const again = await cli([SAMPLE, "--json", "--keep-recent", "12000", "--instructions", "the rollout plan"], {
      BASE_CONTEXT_HOME: dirs.make("bc-cli-home-"),
    });
    expect(first.code).toBe(0);
    expect(again.code).toBe(0);
    const a = JSON.parse(first.stdout) as JsonReport;
    const b = JSON.parse(again.stdout) as JsonReport;
    expect(a).toMatchObject({ status: "committed", summarizer: "extractive", sessionId: "5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13" });
    expect(a.contextTokens.after).toBeLessThan(a.contextTokens.before);
    expect(a.entry).toMatchObject({ type: "compaction", details: { summarizer: "extractive" } });
    expect(a.retention).toBeDefined();
    expect(a.retention).toEqual(a.entry?.details?.retention);
    expect(a.imported?.importedBefore).toBeUndefined();
    expect(b.entry?.customInstructions).toBe("the rollout plan");
    // Keeping fewer recent tokens keeps fewer entries verbatim and summarizes more.
    expect(b.stats!.keptEntries).toBeLessThan(a.stats!.keptEntries);
    expect(b.stats!.summarizedMessages + b.stats!.turnPrefixMessages).toBeGreaterThan(
      a.stats!.summarizedMessages + a.stats!.turnPrefixMessages,
    );
  });

  it("agrees with import on a file imported before: its session is compacted, no copy is made", async () => {
    const home = dirs.make("bc-cli-home-");
    const first = JSON.parse((await cli([SAMPLE, "--json"], { BASE_CONTEXT_HOME: home })).stdout) as JsonReport;
    const again = await cli([SAMPLE], { BASE_CONTEXT_HOME: home });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`was imported before as session ${first.sessionId}`);
    expect(again.stdout).toContain("Nothing to compact: the last entry is already a compaction.");
    const json = JSON.parse((await cli([SAMPLE, "--json"], { BASE_CONTEXT_HOME: home })).stdout) as JsonReport;
    expect(json.sessionId).toBe(first.sessionId);
    expect(json.imported?.importedBefore).toBe(true);
    expect(json.imported?.entryCount).toBeGreaterThan(first.imported!.entryCount);
    const listed = execFileSync(process.execPath, [DAEMON_MAIN, "sessions", "--json"], {
      env: { ...process.env, ...storeEnvFor(home), BASE_CONTEXT_HOME: home },
      encoding: "utf8",
    });
    expect((JSON.parse(listed) as { sessions: unknown[] }).sessions).toHaveLength(1);
  });

  it("compacts a session of the database by id, and reports nothing to compact (exit 0) when it was just compacted", async () => {
    const home = dirs.make("bc-cli-home-");
    await cli([SAMPLE], { BASE_CONTEXT_HOME: home });
    const run = await cli(["5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13"], { BASE_CONTEXT_HOME: home });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Nothing to compact: the last entry is already a compaction.");
  });

  it("fails with exit 1 and a clear message for an unknown session id", async () => {
    const run = await cli(["no-such-session"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain('no session with id "no-such-session"');
    expect(run.stderr).toContain("base-context sessions");
  });

  it("fails with exit 1 for a missing file, and exit 2 for bad arguments", async () => {
    const missing = await cli(["missing/session.jsonl"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no such file");
    const usage = await cli([SAMPLE, "--keep-recent", "lots"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--keep-recent takes a whole number");
    const none = await cli([]);
    expect(none.code).toBe(2);
  });
});

describe("base-context compact with a model", () => {
  const fake = useFakeOpenAI();

  it("uses the configured model and names it", async () => {
    const home = dirs.make("bc-cli-home-");
    writeFileSync(
      join(home, "settings.json"),
      JSON.stringify({ summarizer: { provider: "openai", baseURL: fake.baseURL, model: "fake-cli-model" } }),
    );
    const run = await cli([SAMPLE], { BASE_CONTEXT_HOME: home, OPENAI_API_KEY: "test-key" });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Summarizer\s+openai:fake-cli-model/);
    expect(run.stdout).toContain("Fake summary of:");
    expect(run.stdout).not.toContain("export OPENAI_API_KEY=");
    expect(fake.chatRequests().length).toBeGreaterThanOrEqual(1);
    expect(fake.chatRequests()[0]!.body?.model).toBe("fake-cli-model");
  });
});
