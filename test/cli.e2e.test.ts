/**
 * The `base-context` commands that work on sessions — sessions, show, import, export — run as a
 * user runs them: output, exit status (0 ok, 1 failure, 2 usage error) and the messages that say
 * what to do when something is wrong.
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture } from "./fixtures/e2e.js";
import { DAEMON_MAIN } from "./support/daemon.js";
import { runCli, type CliRun } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";
import { onPostgres, storeEnvFor } from "./support/engine.js";
import { TEST_NODE } from "./support/test-node.js";

const SAMPLE = join(import.meta.dirname, "..", "examples", "sessions", "refactor-auth.jsonl");
const SAMPLE_ID = "5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13";
const MALFORMED_ID = "9a8b7c6d-1111-4222-8333-444455556666";
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[/;

const dirs = tempDirs();
let home: string;
const cli = (...args: string[]): Promise<CliRun> => runCli(args, { home });

beforeAll(async () => {
  home = dirs.make("bc-cli-");
  const imported = await cli("import", SAMPLE);
  expect(imported.code, imported.stderr).toBe(0);
  const malformed = await cli("import", fixture("pi-malformed.jsonl"));
  expect(malformed.code, malformed.stderr).toBe(0);
});
afterAll(() => dirs.cleanup());

describe("help and usage", () => {
  it("lists every command in base-context --help, and every command has its own --help", async () => {
    const help = await cli("--help");
    expect(help.code).toBe(0);
    const commands = help.stdout
      .split("Commands:\n")[1]!
      .split("\n\n")[0]!
      .split("\n")
      .map((line) => line.trim().split(/\s+/)[0]!);
    expect(commands).toEqual(expect.arrayContaining(["serve", "sessions", "show", "import", "export", "settings", "doctor"]));
    const helps = await Promise.all(commands.map((command) => cli(command, "--help")));
    helps.forEach((own, i) => {
      expect(own.code, `${commands[i]} --help`).toBe(0);
      expect(own.stdout, `${commands[i]} --help`).toMatch(new RegExp(`^Usage: base-context ${commands[i]}`));
    });
  });

  it("exits 2 with the problem and a pointer to --help for an unknown option or a missing argument", async () => {
    const [unknown, missing, badLimit] = await Promise.all([cli("sessions", "--colour"), cli("show"), cli("sessions", "--limit", "many")]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option --colour");
    expect(unknown.stderr).toContain('Run "base-context sessions --help"');

    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing <session>");

    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toContain("--limit takes a whole number");
  });
});

describe("import", () => {
  it("reports what it imported into which session", async () => {
    const fresh = dirs.make("bc-cli-import-");
    const run = await runCli(["import", SAMPLE, "--cwd", "/home/me/elsewhere"], { home: fresh });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Imported 69 entries from refactor-auth.jsonl into session ${SAMPLE_ID}`);
    expect(run.stdout).toContain("cwd: /home/me/elsewhere");
    expect(run.stdout).not.toMatch(ANSI);
    expect(run.stderr, "no progress line when stderr is not a terminal").toBe("");
  });

  it("lists the corrupt lines it skipped with their line numbers", async () => {
    const fresh = dirs.make("bc-cli-import-");
    const run = await runCli(["import", fixture("pi-malformed.jsonl")], { home: fresh });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Skipped 5 lines that could not be read:");
    for (const line of [3, 5, 6, 7, 9]) expect(run.stdout).toMatch(new RegExp(`^  line ${line}: `, "m"));
    expect(run.stdout).toContain("line 3: invalid JSON");
    expect(run.stdout).toContain('line 6: unknown entry type "mystery"');

    const again = await runCli(["import", fixture("pi-malformed.jsonl"), "--json", "--cwd", "/x"], { home: dirs.make("bc-cli-import-") });
    const result = JSON.parse(again.stdout) as { entryCount: number; skippedLines: { line: number; reason: string }[] };
    expect(result.entryCount).toBe(3);
    expect(result.skippedLines.map((skip) => skip.line)).toEqual([3, 5, 6, 7, 9]);
  });

  it("fails with exit 1 for a file that does not exist; a session imported twice is brought up to date", async () => {
    const missing = await cli("import", join(home, "nope.jsonl"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no such file");

    const twice = await cli("import", SAMPLE);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toMatch(new RegExp(`^Nothing new in .*: session ${SAMPLE_ID}.*imported before, is up to date`));
    expect(twice.stdout).toContain(`base-context show ${SAMPLE_ID}`);
  });
});

describe("sessions", () => {
  it("lists sessions newest first with id, date, entry count, cwd and title", async () => {
    const run = await cli("sessions");
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+UPDATED\s+ENTRIES\s+CWD\s+TITLE$/);
    expect(lines[1]).toMatch(
      new RegExp(`^${SAMPLE_ID}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+69\\s+/srv/api\\s+We need to move the API`),
    );
    expect(lines[2]).toMatch(new RegExp(`^${MALFORMED_ID}\\s.*\\s3\\s+/home/dev/broken\\s+first$`));
    expect(lines[3]).toBe("2 sessions");
  });

  it("searches the name or first message, filters by cwd and stops at --limit", async () => {
    const query = await cli("sessions", "JWTS", "--json");
    expect((JSON.parse(query.stdout) as { sessions: { id: string }[] }).sessions.map((s) => s.id)).toEqual([SAMPLE_ID]);

    const byCwd = await cli("sessions", "--cwd", "/home/dev/broken", "--json");
    expect((JSON.parse(byCwd.stdout) as { sessions: { id: string }[] }).sessions.map((s) => s.id)).toEqual([MALFORMED_ID]);

    const limited = await cli("sessions", "--limit", "1");
    expect(limited.stdout).toContain("1 session shown; more match (use --limit to see more)");
    const limitedJson = JSON.parse((await cli("sessions", "--limit", "1", "--json")).stdout) as { sessions: unknown[]; more: boolean };
    expect(limitedJson).toMatchObject({ more: true });
    expect(limitedJson.sessions).toHaveLength(1);

    const none = await cli("sessions", "no such words anywhere");
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("No sessions match.\n");
  });

  it("says how to get a first session when there is none", async () => {
    const run = await runCli(["sessions"], { home: dirs.make("bc-cli-empty-") });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("No sessions yet. Import one with: base-context import <file.jsonl>");
  });
});

describe("show", () => {
  it("prints every message of the context with its token count, and the total", async () => {
    const run = await cli("show", SAMPLE_ID);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`^session ${SAMPLE_ID} · /srv/api\nleaf \\w+ · model openai/gpt-4.1 · thinking medium · format native\n`),
    );
    expect(run.stdout).toMatch(/── 1 · user · 93 tokens ─+\nWe need to move the API/);
    expect(run.stdout).toContain("→ read({\"path\":\"src/auth/middleware.ts\"})");
    expect(run.stdout).toMatch(/── 3 · toolResult read · \d+ tokens/);

    const json = JSON.parse((await cli("show", SAMPLE_ID, "--json")).stdout) as {
      tokens: number;
      messages: { index: number; tokens: number; role: string }[];
    };
    // Per-message counts are the stored counts the total is made of.
    expect(json.messages.reduce((sum, message) => sum + message.tokens, 0)).toBe(json.tokens);
    // Both totals, each saying what it is: the count, and pi's estimate that the threshold uses.
    const [total, estimate] = run.stdout.trimEnd().split("\n").slice(-2);
    expect(total).toBe(
      `Total: ${json.tokens.toLocaleString("en-US")} tokens in ${json.messages.length} messages (counted with o200k_base)`,
    );
    expect(estimate).toMatch(
      /^Estimate: [\d,]+ tokens \(pi's estimate: the model's last reported usage \+ 4 characters a token after it; the compaction threshold is checked against it\)$/,
    );
  });

  it("shows the OpenAI chat messages a client would send, one line each with --brief", async () => {
    const json = JSON.parse((await cli("show", SAMPLE_ID, "--format", "openai-chat", "--json")).stdout) as {
      format: string;
      tokens: number;
      messages: { role: string; tokens: number; message: { role: string; tool_calls?: unknown[] } }[];
    };
    expect(json.format).toBe("openai-chat");
    expect(new Set(json.messages.map((m) => m.message.role))).toEqual(new Set(["user", "assistant", "tool"]));
    expect(json.messages.reduce((sum, message) => sum + message.tokens, 0)).toBe(json.tokens);

    const brief = await cli("show", SAMPLE_ID, "--format", "openai-chat", "--brief");
    const messageLines = brief.stdout.split("\n").filter((line) => /^\s*\d+\s+[\d,]+ tokens\s/.test(line));
    expect(messageLines).toHaveLength(json.messages.length);
    expect(messageLines[0]).toMatch(/^ ?1\s+\d+ tokens\s+user\s+We need to move/);
  });

  it("takes a unique start of the id and builds the context up to --leaf", async () => {
    const prefix = await cli("show", SAMPLE_ID.slice(0, 8), "--json");
    expect(prefix.code).toBe(0);
    const first = JSON.parse(prefix.stdout) as { sessionId: string; messages: { index: number }[] };
    expect(first.sessionId).toBe(SAMPLE_ID);

    const exported = (await cli("export", SAMPLE_ID)).stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: string; type: string; message?: { role: string } });
    const firstUser = exported.find((entry) => entry.type === "message" && entry.message?.role === "user")!;
    const upToFirst = JSON.parse((await cli("show", SAMPLE_ID, "--leaf", firstUser.id, "--json")).stdout) as {
      leafId: string;
      messages: unknown[];
    };
    expect(upToFirst.leafId).toBe(firstUser.id);
    expect(upToFirst.messages).toHaveLength(1);
  });

  it("names an unknown session and suggests base-context sessions (exit 1)", async () => {
    const run = await cli("show", "no-such-session");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain('no session with id "no-such-session"');
    expect(run.stderr).toContain("base-context sessions");

    const badLeaf = await cli("show", SAMPLE_ID, "--leaf", "ffffffff");
    expect(badLeaf.code).toBe(1);
    expect(badLeaf.stderr).toContain(`has no entry "ffffffff"`);
  });
});

describe("export", () => {
  it("writes the session as pi JSONL to stdout, or to a file it will not overwrite without --force", async () => {
    const stdout = await cli("export", SAMPLE_ID);
    expect(stdout.code).toBe(0);
    const lines = stdout.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(70);
    expect(JSON.parse(lines[0]!)).toMatchObject({ type: "session", id: SAMPLE_ID });

    const file = join(home, "out.jsonl");
    const toFile = await cli("export", SAMPLE_ID, "-o", file);
    expect(toFile.code).toBe(0);
    expect(toFile.stdout).toBe(`Exported session ${SAMPLE_ID} (69 entries) to ${file}\n`);
    expect(readFileSync(file, "utf8")).toBe(stdout.stdout);

    const again = await cli("export", SAMPLE_ID, "-o", file);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("exists");
    expect(again.stderr).toContain("--force");
    expect((await cli("export", SAMPLE_ID, "-o", file, "--force")).code).toBe(0);
  });

  it("exits 1 naming an unknown session", async () => {
    const run = await cli("export", "0000dead");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no session with id "0000dead"');
    expect(run.stderr).toContain("base-context sessions");
  });
});

/**
 * Runs the command with a pseudo-terminal as stdout and stderr (through Python's pty module, which
 * every machine here has), as when a person types it.
 */
async function runInTerminal(args: string[], env: Record<string, string>): Promise<string> {
  const script = [
    "import os, pty, subprocess, sys",
    "leader, follower = pty.openpty()",
    "child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=follower, stderr=follower)",
    "os.close(follower)",
    "out = b''",
    "while True:",
    "    try:",
    "        chunk = os.read(leader, 65536)",
    "    except OSError:",
    "        break",
    "    if not chunk:",
    "        break",
    "    out += chunk",
    "child.wait()",
    "sys.stdout.write(out.decode('utf-8', 'replace'))",
  ].join("\n");
  // As a person's shell would have it: no colour switches inherited from the test run's own log.
  const { NO_COLOR: _noColor, FORCE_COLOR: _forceColor, ...inherited } = process.env;
  const { stdout } = await promisify(execFile)("python3", ["-c", script, TEST_NODE, DAEMON_MAIN, ...args], {
    env: { ...inherited, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), TERM: "xterm", ...env },
  });
  return stdout;
}

describe("colour", () => {
  it("colours output on a terminal, and not with NO_COLOR or when piped", async () => {
    const [terminal, noColor, piped] = await Promise.all([
      runInTerminal(["sessions"], {}),
      runInTerminal(["sessions"], { NO_COLOR: "1" }),
      cli("sessions"),
    ]);
    expect(terminal).toMatch(ANSI);
    expect(terminal).toContain(SAMPLE_ID);
    expect(noColor).not.toMatch(ANSI);
    expect(noColor).toContain(SAMPLE_ID);
    expect(piped.stdout).not.toMatch(ANSI);
  });
});

// About the SQLite file under the home: on PostgreSQL there is no such file to damage.
describe.skipIf(onPostgres)("a database that cannot be read", () => {
  it("says which file it is and what to do, for every command that needs it (exit 1)", async () => {
    const broken = dirs.make("bc-cli-broken-");
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, "sessions.db"), "this is not a SQLite database, just text that happens to be here ".repeat(100));
    const commands = [["sessions"], ["show", SAMPLE_ID], ["import", SAMPLE], ["export", SAMPLE_ID]];
    const runs = await Promise.all(commands.map((args) => runCli(args, { home: broken })));
    for (const [i, run] of runs.entries()) {
      expect(run.code, commands[i]!.join(" ")).toBe(1);
      expect(run.stderr).toContain(`the session database ${join(broken, "sessions.db")} is damaged or is not a Base Context database`);
      expect(run.stderr).toContain(`mv "${join(broken, "sessions.db")}"`);
      expect(run.stderr).toContain("BASE_CONTEXT_HOME");
    }
  });
});
