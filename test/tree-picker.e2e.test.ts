/**
 * `base-context tree` on a terminal: the interactive picker, driven through a real
 * pseudo-terminal (tmux). Every step waits for what the screen shows, never for time.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DAEMON_MAIN } from "./support/daemon.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";
import { openTerminal, type Terminal } from "./support/tmux.js";
import { storeEnvFor } from "./support/engine.js";
import { TEST_NODE } from "./support/test-node.js";

const dirs = tempDirs();
const terminals: Terminal[] = [];
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.close();
  dirs.cleanup();
});

const SESSION_ID = "7c1e0f3a-2b4d-4e6f-8a9b-0c1d2e3f4a5b";

/** A session with two branches after the first answer; the leaf is on the second. */
function sessionFile(dir: string): string {
  const at = (second: number) => `2026-01-05T09:00:${String(second).padStart(2, "0")}.000Z`;
  const userLine = (id: string, parentId: string | null, second: number, text: string) =>
    JSON.stringify({
      type: "message",
      id,
      parentId,
      timestamp: at(second),
      message: { role: "user", content: text, timestamp: 1767603600000 + second * 1000 },
    });
  const assistantLine = (id: string, parentId: string, second: number, text: string) =>
    JSON.stringify({
      type: "message",
      id,
      parentId,
      timestamp: at(second),
      message: {
        role: "assistant",
        content: [{ type: "text", text }],
        api: "openai-completions",
        provider: "openai",
        model: "gpt-4.1",
        usage: {
          input: 10,
          output: 10,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 20,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop",
        timestamp: 1767603600000 + second * 1000,
      },
    });
  const lines = [
    JSON.stringify({ type: "session", version: 3, id: SESSION_ID, timestamp: at(0), cwd: "/home/me/app" }),
    userLine("a0000001", null, 1, "Fix the login bug in src/auth.ts"),
    assistantLine("a0000002", "a0000001", 2, "Fixed the comparison."),
    userLine("a0000003", "a0000002", 3, "Now try redis for the session store"),
    assistantLine("a0000004", "a0000003", 4, "Added a redis store."),
    userLine("a0000005", "a0000002", 5, "Use an in-memory store instead"),
    assistantLine("a0000006", "a0000005", 6, "The in-memory store is in."),
  ];
  const path = join(dir, "session.jsonl");
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

async function setUp(): Promise<{ home: string; terminal: Terminal }> {
  const home = dirs.make();
  const imported = await runCli(["import", sessionFile(home)], { home });
  expect(imported.code, imported.stderr).toBe(0);
  const terminal = openTerminal(home, [TEST_NODE, DAEMON_MAIN, "tree", SESSION_ID.slice(0, 8)], {
    BASE_CONTEXT_HOME: home,
    ...storeEnvFor(home),
    TERM: "xterm-256color",
  });
  terminals.push(terminal);
  return { home, terminal };
}

describe("the tree picker on a terminal", () => {
  it("moves, filters, folds, and navigates with a branch summary and instructions", async () => {
    const { home, terminal } = await setUp();
    let screen = await terminal.waitForScreen("filter: all entries");
    expect(screen).toMatch(/›\s+a0000006 assistant: The in-memory store is in\.\s+← current leaf/);
    expect(screen).toContain("├─ a0000003 user: Now try redis for the session store");
    expect(screen).toContain("↑/↓ move · ←/→ fold/unfold · f filter · Enter go here · q quit");
    for (const line of screen.split("\n")) expect(line.length).toBeLessThanOrEqual(100);

    terminal.keys(["f"]);
    screen = await terminal.waitForScreen("filter: user messages");
    expect(screen).not.toContain("Fixed the comparison.");
    expect(screen).toContain("a0000005 user: Use an in-memory store instead");
    terminal.keys(["f", "f", "f"]);
    await terminal.waitForScreen("filter: all entries");

    // Up to the redis answer (the other branch), fold the first answer's subtree and unfold it.
    terminal.keys(["Up", "Up"]);
    await terminal.waitForScreen(/› .*a0000004 assistant: Added a redis store\./);
    terminal.keys(["Up", "Up"]);
    await terminal.waitForScreen(/› a0000002 assistant: Fixed the comparison\./);
    terminal.keys(["Left"]);
    screen = await terminal.waitForScreen("[+4 folded]");
    expect(screen).not.toContain("a0000004");
    terminal.keys(["Right"]);
    await terminal.waitForScreen("a0000004 assistant: Added a redis store.");

    terminal.keys(["Down", "Down", "Enter"]);
    await terminal.waitForScreen("Go to a0000004. Summarize the branch you leave? [y]es  [n]o  [i] yes, with instructions");
    terminal.keys(["i"]);
    await terminal.waitForScreen("Focus the summary on:");
    terminal.keys(["keep the store choice"], { literal: true });
    await terminal.waitForScreen("Focus the summary on: keep the store choice");
    terminal.keys(["Enter"]);
    await terminal.waitForScreen("[exit 0]");
    // navigate prints the summary after these lines: a long one scrolls them off the screen.
    const printed = terminal.transcript();
    expect(printed).toContain("Moved to a0000004");
    expect(printed).toMatch(/Branch summary \w+ of the branch left at a0000006/);

    const tree = await runCli(["tree", SESSION_ID, "--print", "--width", "200"], { home });
    expect(tree.stdout).toMatch(/\[branch summary\] .*\(replaced 2 entries\)\s+← current leaf/);
  });

  it("quits with q, leaving the session as it was and the terminal restored", async () => {
    const { home, terminal } = await setUp();
    await terminal.waitForScreen("filter: all entries");
    terminal.keys(["Up", "Enter"]);
    await terminal.waitForScreen("Summarize the branch you leave?");
    terminal.keys(["Escape"]);
    await terminal.waitForScreen("Enter go here");
    terminal.keys(["q"]);
    const screen = await terminal.waitForScreen("[exit 0]");
    expect(screen).not.toContain("filter: all entries");
    const tree = await runCli(["tree", SESSION_ID, "--print"], { home });
    expect(tree.stdout).toMatch(/a0000006 assistant: The in-memory store is in\.\s+← current leaf/);
  });

  it("prints the static tree when stdout is not a terminal", async () => {
    const home = dirs.make();
    await runCli(["import", sessionFile(home)], { home });
    const terminal = openTerminal(home, ["sh", "-c", `'${TEST_NODE}' '${DAEMON_MAIN}' tree ${SESSION_ID.slice(0, 8)} | cat`], {
      BASE_CONTEXT_HOME: home,
      ...storeEnvFor(home),
    });
    terminals.push(terminal);
    const screen = await terminal.waitForScreen("[exit 0]");
    expect(screen).toContain("a0000006 assistant: The in-memory store is in.  ← current leaf");
    expect(screen).not.toContain("Enter go here");
  });
});
