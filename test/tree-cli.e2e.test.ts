/**
 * `base-context tree` and `base-context navigate` as a user runs them: separate processes on the
 * database a running `serve` daemon writes to (same BASE_CONTEXT_HOME). No model is configured,
 * so summaries come from the built-in extractive summarizer.
 */
import { EntryAppend, SessionGet } from "@base-context/protocol";
import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { pathWithCli } from "./support/cli-on-path.js";
import { DAEMON_MAIN, useDaemon } from "./support/daemon.js";
import { appendAll, assistant, createSession, toolResult, user } from "./fixtures/e2e.js";
import { storeEnvFor } from "./support/engine.js";
import { TEST_NODE } from "./support/test-node.js";

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const d = useDaemon();

/** Runs the CLI on the daemon's home, stdout not a terminal (so no colour). */
function cli(...args: string[]): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: pathWithCli(), BASE_CONTEXT_HOME: d.home, ...storeEnvFor(d.home) };
  delete env.OPENAI_API_KEY;
  return new Promise((resolve) => {
    execFile(TEST_NODE, [DAEMON_MAIN, ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A main line with a long linear stretch, a compaction, a labelled entry, and a side branch. */
async function sessionWithBranches() {
  const sessionId = await createSession(d.client, "/home/me/project", "login fix");
  const [u1, a1, , a2] = await appendAll(d.client, sessionId, [
    user("fix the login bug"),
    assistant("reading", { toolCalls: [{ id: "c1", name: "read", arguments: { path: "src/auth.ts" } }] }),
    toolResult("c1", "read", "export function login() {}"),
    assistant("fixed it"),
  ]);
  const steps = [];
  for (let i = 1; i <= 15; i++) steps.push(user(`step ${i}`), assistant(`did step ${i}`));
  const stretch = await appendAll(d.client, sessionId, steps);
  await d.client.request(EntryAppend, {
    sessionId,
    entry: {
      type: "compaction",
      summary: "## Goal\nfix the login bug",
      firstKeptEntryId: stretch[stretch.length - 2]!.id,
      tokensBefore: 900,
    },
  });
  const [side] = await appendAll(d.client, sessionId, [user("try another approach")]);
  return { sessionId, u1: u1!, a1: a1!, a2: a2!, step3: stretch[4]!, side: side! };
}

describe("base-context tree", () => {
  it("draws the tree with box lines, marks and folds, and exits 0", async () => {
    const s = await sessionWithBranches();
    await cli("navigate", s.sessionId, s.a2.id, "--summarize", "--label", "back to the fix");

    const run = await cli("tree", s.sessionId);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).not.toContain("\x1b[");
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^session ${s.sessionId} "login fix" · /home/me/project · \\d+ entries$`));
    expect(lines[1]).toBe(`${s.u1.id} user: fix the login bug`);
    expect(run.stdout).toMatch(/… \d+ more entries …/);
    expect(run.stdout).toMatch(/\[compaction\] fix the login bug/);
    expect(run.stdout).toMatch(/├─ \w+ user: step 1\n/);
    expect(run.stdout).toMatch(/└─ \w+ \[branch summary\] .*\[label: back to the fix\]/);
    expect(run.stdout).toMatch(/label: \w+ = "back to the fix"  ← current leaf\n$/);
  });

  it("shows every entry with --all", async () => {
    const s = await sessionWithBranches();
    const run = await cli("tree", s.sessionId, "--all");
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("more entries");
    const { entryCount } = await d.client.request(SessionGet, { sessionId: s.sessionId });
    expect(run.stdout.trimEnd().split("\n")).toHaveLength(entryCount + 1);
  });

  it("prints the flat nodes as JSON with --json", async () => {
    const s = await sessionWithBranches();
    const run = await cli("tree", s.sessionId, "--json");
    expect(run.code).toBe(0);
    const parsed = JSON.parse(run.stdout) as {
      session: { id: string };
      leafId: string;
      nodes: { entry: { id: string }; isLeaf?: boolean }[];
    };
    expect(parsed.session.id).toBe(s.sessionId);
    expect(parsed.leafId).toBe(s.side.id);
    expect(parsed.nodes[0]!.entry.id).toBe(s.u1.id);
    expect(parsed.nodes.find((node) => node.isLeaf)?.entry.id).toBe(s.side.id);

    const byPrefix = await cli("tree", s.sessionId.slice(0, 8), "--json");
    expect(JSON.parse(byPrefix.stdout)).toEqual(parsed);
  });

  it("exits 1 with a clear message for an unknown session, 2 for a missing argument", async () => {
    const [unknown, missing] = await Promise.all([cli("tree", "no-such-session"), cli("tree")]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toBe(
      // The hint names the home the command ran on: pasted into a shell without BASE_CONTEXT_HOME, it still works.
      `base-context tree: no session with id "no-such-session"\n  List the sessions with: BASE_CONTEXT_HOME=${d.home} base-context sessions\n`,
    );

    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('base-context tree: missing <session>\nRun "base-context tree --help" for usage.\n');
  });
});

describe("base-context navigate", () => {
  it("moves to a user message with a summary, prints the text to send again, and the daemon sees the move", async () => {
    const s = await sessionWithBranches();
    const run = await cli("navigate", s.sessionId, s.step3.id, "--summarize", "--instructions", "the login bug");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(
        `^Moved to just before ${s.step3.id}; the leaf is now (\\w+)\\.\\nBranch summary \\1 of the branch left at ${s.side.id}, written by extractive:\\n\\n[\\s\\S]*\\nGoal\\n[\\s\\S]*\\nRetention: kept [^\\n]+\\n(?:Lost: [^\\n]+\\n)?\\nText to edit and send again:\\n {2}step 3\\n$`,
      ),
    );
    // The summary is printed as compact prints it, with the custom instructions it was given.
    expect(run.stdout).toContain("Requested focus: the login bug");
    const leafId = /the leaf is now (\w+)/.exec(run.stdout)![1];
    expect((await d.client.request(SessionGet, { sessionId: s.sessionId })).leafId).toBe(leafId);
  });

  it("prints the result as JSON with --json, and says when there is nothing to do", async () => {
    const s = await sessionWithBranches();
    const moved = await cli("navigate", s.sessionId, s.a1.id, "--label", "reading", "--json");
    expect(moved.code).toBe(0);
    const result = JSON.parse(moved.stdout) as { status: string; leafId: string };
    expect(result.status).toBe("moved");

    const again = await cli("navigate", s.sessionId, result.leafId);
    expect(again).toMatchObject({ code: 0, stdout: `Already at ${result.leafId}: nothing to do.\n` });
  });

  it("exits 1 for an unknown session or entry and 2 for bad arguments, writing nothing", async () => {
    const s = await sessionWithBranches();
    const before = await d.client.request(SessionGet, { sessionId: s.sessionId });

    const [noSession, noEntry, badWindow, unknownOption] = await Promise.all([
      cli("navigate", "no-such-session", s.a1.id),
      cli("navigate", s.sessionId, "deadbeef", "--summarize"),
      cli("navigate", s.sessionId, s.a1.id, "--context-window", "lots"),
      cli("navigate", s.sessionId, s.a1.id, "--sumarize"),
    ]);
    expect(noSession.code).toBe(1);
    expect(noSession.stderr).toMatch(/^base-context navigate: no session with id "no-such-session"\n/);
    expect(noEntry.code).toBe(1);
    expect(noEntry.stderr).toBe(
      `base-context navigate: session "${s.sessionId}" has no entry "deadbeef"\n  See the session's entries with: BASE_CONTEXT_HOME=${d.home} base-context tree ${s.sessionId}\n`,
    );
    expect(badWindow.code).toBe(2);
    expect(badWindow.stderr).toMatch(/^base-context navigate: --context-window takes a whole number/);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toMatch(/^base-context navigate: unknown option --sumarize/);

    expect(await d.client.request(SessionGet, { sessionId: s.sessionId })).toEqual(before);
  });
});
