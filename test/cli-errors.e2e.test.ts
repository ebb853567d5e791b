/**
 * One vocabulary for what goes wrong, whichever command meets it; import of a session that is
 * already here (--new-id); export after navigating keeps the current position for pi.
 */
import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DAEMON_MAIN } from "./support/daemon.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const dirs = tempDirs();
afterEach(dirs.cleanup);

const EXAMPLE = join(import.meta.dirname, "..", "examples", "sessions", "refactor-auth.jsonl");
const README = join(import.meta.dirname, "..", "README.md");
const EXAMPLE_ID = "5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13";

describe("the same words for the same problem in every command", () => {
  it("a missing file, a text file, a binary file, an empty file, a folder", async () => {
    const home = dirs.make();
    const binary = join(home, "image.png");
    writeFileSync(binary, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]));
    const empty = join(home, "empty.jsonl");
    writeFileSync(empty, "");
    const missing = join(home, "missing.jsonl");
    for (const command of ["import", "compact"]) {
      const cases: [string, string][] = [
        [missing, `no such file: ${missing}`],
        [README, `${README} is not a pi session file: none of its lines is JSON`],
        [binary, `${binary} is not a pi session file: it is a binary file`],
        [empty, `${empty} is empty: a session file holds a line per entry (pi's starts with a session header line)`],
      ];
      for (const [file, message] of cases) {
        const run = await runCli([command, file], { home });
        expect(run.code, `${command} ${file}`).toBe(1);
        expect(run.stderr.split("\n")[0]).toBe(`base-context ${command}: ${message}`);
        expect(run.stderr).not.toMatch(/ENOENT|the file is empty/);
      }
    }
    const folder = await runCli(["import", home], { home });
    expect(folder.stderr).toContain(`${home} is a folder, not a session file`);
  });

  it("asks for at least 4 characters of a session id, in every command that takes one", async () => {
    const home = dirs.make();
    for (const command of [
      ["show", "d7"],
      ["tree", "d7"],
      ["export", "d7"],
      ["compact", "d7"],
      ["navigate", "d7", "x"],
      ["rename", "d7", "x"],
      ["label", "d7", "x", "y"],
      ["delete", "d7"],
    ]) {
      const run = await runCli(command, { home });
      expect(run.code, command.join(" ")).toBe(1);
      expect(run.stderr).toContain(`base-context ${command[0]}: "d7" is too short to pick a session: give at least 4 characters of its id`);
    }
    const unknown = await runCli(["show", "d7d7"], { home });
    expect(unknown.stderr).toContain('no session with id "d7d7"');
  });
});

describe("hints that run where the user is", () => {
  it("name the command as run from a clone when base-context is not on the PATH", async () => {
    const home = dirs.make();
    const repo = join(import.meta.dirname, "..");
    // The program the suite runs, as a path from the clone (the installed command by default).
    const asRun = `node ${relative(repo, DAEMON_MAIN)}`;
    // The home it ran on (BASE_CONTEXT_HOME) is in the hint, so that it runs pasted into any shell.
    const run = await runCli(["show", "d7d7"], { home, cwd: repo, env: { PATH: "/usr/bin:/bin" } });
    expect(run.stderr).toContain(`List the sessions with: BASE_CONTEXT_HOME=${home} ${asRun} sessions`);
    const compacted = await runCli(["compact", EXAMPLE], { home, cwd: repo, env: { PATH: "/usr/bin:/bin" } });
    expect(compacted.stdout).toContain(`  BASE_CONTEXT_HOME=${home} ${asRun} show ${EXAMPLE_ID} --brief`);
    const installed = await runCli(["show", "d7d7"], { home, cwd: repo });
    expect(installed.stderr).toContain(`List the sessions with: BASE_CONTEXT_HOME=${home} base-context sessions`);
  });
});

describe("import of a session that is already here", () => {
  it("says it is up to date, offers --new-id, and --new-id imports a copy", async () => {
    const home = dirs.make();
    expect((await runCli(["import", EXAMPLE], { home })).code).toBe(0);
    const again = await runCli(["import", EXAMPLE], { home });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Nothing new in refactor-auth.jsonl: session ${EXAMPLE_ID}`);
    expect(again.stdout).toContain(`base-context import ${EXAMPLE} --new-id`);
    const copy = await runCli(["import", EXAMPLE, "--new-id", "--json"], { home });
    expect(copy.code, copy.stderr).toBe(0);
    const { session, entryCount } = JSON.parse(copy.stdout) as { session: { id: string }; entryCount: number };
    expect(session.id).not.toBe(EXAMPLE_ID);
    expect(entryCount).toBe(69);
  });
});

describe("export after navigating", () => {
  it("writes the current position last, so the file opens where the session is; warns when it cannot", async () => {
    const home = dirs.make();
    await runCli(["import", EXAMPLE], { home });
    // Go back to an assistant answer in the middle: a new branch starts there.
    const tree = JSON.parse((await runCli(["tree", EXAMPLE_ID, "--json"], { home })).stdout) as {
      nodes: { entry: { id: string; type: string; message?: { role: string } } }[];
    };
    const middle = tree.nodes.filter((node) => node.entry.message?.role === "assistant")[10]!.entry.id;
    const moved = await runCli(["navigate", EXAMPLE_ID, middle], { home });
    expect(moved.code, moved.stderr).toBe(0);

    // The leaf has entries under it (the old branch): it cannot be last.
    const blocked = await runCli(["export", EXAMPLE_ID, "-o", join(home, "blocked.jsonl")], { home });
    expect(blocked.code).toBe(0);
    expect(blocked.stderr).toContain(`warning: the current position ${middle} has later entries under it`);

    // Label an entry: the leaf is now a label entry on the new branch, with nothing under it.
    await runCli(["label", EXAMPLE_ID, middle, "here"], { home });
    const leafId = (JSON.parse((await runCli(["tree", EXAMPLE_ID, "--json"], { home })).stdout) as { leafId: string }).leafId;
    const file = join(home, "out.jsonl");
    const exported = await runCli(["export", EXAMPLE_ID, "-o", file], { home });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toBe("");
    const copy = JSON.parse((await runCli(["import", file, "--new-id", "--json"], { home })).stdout) as { session: { id: string } };
    const reimported = JSON.parse((await runCli(["tree", copy.session.id, "--json"], { home })).stdout) as {
      leafId: string;
      nodes: unknown[];
    };
    expect(reimported.leafId).toBe(leafId);
    expect(reimported.nodes).toHaveLength(70);
  });
});
