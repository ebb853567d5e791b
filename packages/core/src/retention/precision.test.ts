/**
 * Probes with precision first (docs/retention.md): what is not a request or a constraint, errors
 * seen by their own first line, errors fixed later, and repair that appends only what is sure.
 */
import type { ContextMessage } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { INJECTED_TEXT_TYPE } from "../injected.js";
import { resultMessage, sayMessage as say } from "../test-support.js";
import { formatRetention, checkRetention } from "./check.js";
import { probeMessages } from "./probes.js";
import { repairSummary } from "./repair.js";
import { commandKey } from "./resolution.js";
import { ownWords, readConstraint, readRequest } from "./user-text.js";

const user = (content: string): ContextMessage => ({ role: "user", content });
const result = resultMessage;
const bash = (id: string, command: string): ContextMessage => say("", [[id, "bash", { command }]]);

describe("requests: a message that asks for work", () => {
  it.each([
    "ok, make muted a little brighter",
    "yeah, do it all",
    "can you write a simple test that prints each color?",
    "any idea why the colors differ in the two terminals?",
    "alright, i think there's only one file left to fix up, tui-renderer.ts, read it in full",
    "bullet in markdown should be same as inline code",
  ])("yes: %s", (text) => expect(readRequest(text)).toBe("yes"));

  it.each([
    "Jesus, everything works, you are a monster",
    "Are we all commited?",
    "did you push?",
    "/mode",
    "thanks!",
  ])("no: %s", (text) => expect(readRequest(text)).toBe("no"));

  it("a remark that asks for nothing clearly is unsure, and counted as unjudged, not as a request", () => {
    expect(readRequest("md link is actually 666666")).toBe("unsure");
    const probes = probeMessages([user("md link is actually 666666"), user("Great, it works now. Thanks!")]);
    expect(probes.requests).toEqual([]);
    expect(probes.unjudged).toEqual({ requests: 1, constraints: 0 });
  });
});

describe("constraints: whole sentences that set a standing rule", () => {
  it.each([
    "invalid themes must NEVER explode",
    "no console logs!",
    "omfg use rgb values in the themes, no rgb indices!",
    "should be dimmer, don't modify the theme, look into the footer sources",
    "setTheme should return an error that the caller can display however they want",
  ])("yes: %s", (text) => expect(readConstraint(text)).toBe("yes"));

  it.each([
    "what color are the codeblocks using? should be 8ABeB7",
    "should be 8ABeB7",
    "link text should be same as accent",
    "i selected the theme while you were working and got a crash, that should never happen.",
    "i don't think the component invalidate works correctly.",
    "alright, i think there's only one file left to fix up",
  ])("not a constraint: %s", (text) => expect(readConstraint(text)).not.toBe("yes"));

  it("an API error the user pasted is not a constraint, whatever its 'must'", () => {
    const pasted =
      'it fails with this:\n400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.1: `tool_use` ' +
      'block must have a corresponding `tool_result` block in the next message."}}';
    expect(probeMessages([user(pasted)]).constraints).toEqual([]);
  });

  it("reads the user's own words: pasted output is left out, wrapped lines are joined", () => {
    const pasted = [
      "my dude, this exploded when i restarted with -r. invalid themes must NEVER explode",
      "",
      "➜  pi-mono git:(main) ✗ npx tsx packages/coding-agent/src/cli.ts -r",
      "Error: Invalid hex color: #000cc",
      "    at parseColor (theme.ts:12:9)",
    ].join("\n");
    expect(ownWords(pasted)).toBe("my dude, this exploded when i restarted with -r. invalid themes must NEVER explode");
    const wrapped = "please put the moved files in the locations where those\nmodules should go, never in src/";
    expect(probeMessages([user(wrapped)]).constraints.map((c) => c.text)).toEqual([
      "please put the moved files in the locations where those modules should go, never in src/",
    ]);
  });
});

describe("errors: seen by their first line, fixed by a later success or the assistant's word", () => {
  it("a result whose first line is an error line failed, flagged or not; a read file's content did not", () => {
    const probes = probeMessages([
      say("", [
        ["a", "bash", { command: "node cart.js" }],
        ["b", "read", { path: "notes/errors.md" }],
      ]),
      result("a", "bash", "TypeError: cannot read property 'amount' of undefined"),
      result("b", "read", "Error: this file lists the errors we saw"),
    ]);
    expect(probes.errors.map((e) => e.text)).toEqual(["TypeError: cannot read property 'amount' of undefined"]);
    expect(probes.errors[0]!.resolved).toBeUndefined();
  });

  it("the same command however wrapped, run again without an error, fixes it", () => {
    expect(commandKey("cd packages/a && npm run check 2>&1 | tail -20")).toBe("npm run check");
    const probes = probeMessages([
      bash("a", "cd packages/a && npm run check"),
      result("a", "bash", "src/x.ts(3,1): error TS2304: Cannot find name 'y'.\nCommand exited with code 2", true),
      bash("b", "cd packages/a && npm run check 2>&1 | tail -20"),
      result("b", "bash", "ok"),
    ]);
    expect(probes.errors.map((e) => [e.text, e.resolved])).toEqual([["src/x.ts(3,1): error TS2304: Cannot find name 'y'.", true]]);
  });

  it("the assistant saying the build passes fixes a command's failure; saying it still fails does not", () => {
    const failing = [bash("a", "npx tsc --noEmit"), result("a", "bash", "error TS2739: Type is missing properties\nexit code 2", true)];
    expect(probeMessages([...failing, say("The build still fails.")]).errors[0]!.resolved).toBeUndefined();
    expect(probeMessages([...failing, say("All tests now compile without errors and the build succeeds!")]).errors[0]!.resolved).toBe(true);
  });

  it("a cancelled call is no error; a grep of a missing file is an answer, not a failure", () => {
    const probes = probeMessages([
      bash("a", "npm test"),
      result("a", "bash", "Debugger attached.\nCommand aborted", true),
      bash("b", 'grep -A 3 "a\\|b" packages/tui/src/wrap-ansi.ts'),
      result("b", "bash", "grep: packages/tui/src/wrap-ansi.ts: No such file or directory\n\nCommand exited with code 2", true),
    ]);
    expect(probes.errors).toEqual([]);
  });

  it("a call the user refused stands, by its first sentences, until the work goes on", () => {
    const refused =
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string " +
      "was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";
    const calls = [say("", [["c", "bash", { command: "git merge --abort" }]]), result("c", "bash", refused, true)];
    const standing = probeMessages(calls).errors;
    expect(standing).toEqual([
      { text: "The user doesn't want to proceed with this tool use. The tool use was rejected", index: 1, detail: "git merge --abort" },
    ]);
    const later = probeMessages([...calls, bash("d", "git status"), result("d", "bash", "On branch main")]).errors;
    expect(later[0]!.resolved).toBe(true);
  });

  it("a command that says nothing but its exit status is a check that answered no, not an error", () => {
    const probes = probeMessages([bash("a", "sudo ip link show tun0 2>/dev/null"), result("a", "bash", "Exit code 1", true)]);
    expect(probes.errors).toEqual([]);
  });

  it("the error a person reads: not the location line above it, not the harness's exit note", () => {
    const output = "Exit code 1\n/Users/me/project/[eval]:1\n^^^\nthe module could not be loaded from here";
    const probes = probeMessages([bash("a", "node -e 'x'"), result("a", "bash", output, true)]);
    expect(probes.errors.map((e) => e.text)).toEqual(["the module could not be loaded from here"]);
  });

  it("a command failing again for another reason supersedes its first failure", () => {
    const probes = probeMessages([
      bash("a", "npm run build"),
      result("a", "bash", "error: cannot find module 'x'\nExit code 1", true),
      bash("b", "npm run build"),
      result("b", "bash", "error TS2304: Cannot find name 'y'\nExit code 1", true),
    ]);
    expect(probes.errors.map((e) => [e.text, e.resolved === true])).toEqual([
      ["error: cannot find module 'x'", true],
      ["error TS2304: Cannot find name 'y'", false],
    ]);
  });

  it("a failure whose message names another command is that command's: it stands, once, until that command works", () => {
    const harness = "Command failed: git rev-parse --show-toplevel";
    const probes = probeMessages([
      bash("a", 'powershell.exe -Command "Get-ScheduledTask"'),
      result("a", "bash", harness, true),
      bash("b", "git status"),
      result("b", "bash", "On branch main"),
      bash("c", 'powershell.exe -Command "Get-Service x"'),
      result("c", "bash", harness, true),
    ]);
    expect(probes.errors.map((e) => [e.text, e.resolved === true])).toEqual([[harness, false]]);
  });

  it("a result that is not flagged but whose error stream names an error failed, by that line", () => {
    const output = "<status>running</status>\n<output>\n[stderr] Running hooks...\nPython was not found; run without arguments to install\n</output>";
    const probes = probeMessages([say("", [["a", "TaskOutput", { task_id: "b1" }]]), result("a", "TaskOutput", output)]);
    expect(probes.errors.map((e) => e.text)).toEqual(["Python was not found; run without arguments to install"]);
    const quiet = "<output>\n[stderr] ! First copy your one-time code: 25A4\n[stderr] Authentication complete.\n</output>";
    expect(probeMessages([say("", [["b", "TaskOutput", { task_id: "b2" }]]), result("b", "TaskOutput", quiet)]).errors).toEqual([]);
  });

  it("a tool we know nothing about that failed is fixed by the same tool working later", () => {
    const probes = probeMessages([
      say("", [["a", "TaskOutput", { task_id: "b1" }]]),
      result("a", "TaskOutput", "Error: task b1 timed out", true),
      say("", [["b", "TaskOutput", { task_id: "b2" }]]),
      result("b", "TaskOutput", "<status>completed</status>"),
    ]);
    expect(probes.errors.map((e) => e.resolved === true)).toEqual([true]);
  });

  it("a failed look-up is the agent learning something: it stands only until the work goes on", () => {
    const failed = [bash("a", "whoami /priv"), result("a", "bash", "Exit code 1\nwhoami: extra operand '/priv'", true)];
    expect(probeMessages(failed).errors.map((e) => [e.text, e.resolved === true])).toEqual([["whoami: extra operand '/priv'", false]]);
    const later = probeMessages([...failed, bash("b", "npm run build"), result("b", "bash", "built in 2s")]).errors;
    expect(later.map((e) => e.resolved === true)).toEqual([true]);
  });

  it("a program that is not there taught the agent something: it stands until the work goes on", () => {
    const missing = [
      bash("a", "pkill -9 git"),
      result("a", "bash", "Exit code 127\n/usr/bin/bash: line 1: pkill: command not found", true),
      bash("b", "python3 -c 'print(1)'"),
      result("b", "bash", "Exit code 9009\nPython was not found; run without arguments to install from the Microsoft Store", true),
    ];
    expect(probeMessages(missing).errors.map((e) => e.resolved === true)).toEqual([false, false]);
    const later = probeMessages([...missing, bash("c", "/c/Python314/python -c 'print(1)'"), result("c", "bash", "1")]).errors;
    expect(later.map((e) => e.resolved === true)).toEqual([true, true]);
  });

  it("a failed change is done when the file is written another way; an error reaching a file, when it is reached", () => {
    const probes = probeMessages([
      say("", [["a", "Write", { file_path: "C:/Users/me/app/scripts/sync.py", content: "x" }]]),
      result("a", "Write", "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", true),
      bash("b", "cat > \"$HOME/app/scripts/sync.py\" << 'EOF'\nprint(1)\nEOF"),
      result("b", "bash", ""),
      bash("c", "chmod 644 ./app/workflows/build.yml"),
      result("c", "bash", "chmod: changing permissions of './app/workflows/build.yml': Operation not permitted", true),
      say("", [["d", "Read", { file_path: "/home/me/app/workflows/build.yml" }]]),
      result("d", "Read", "name: build"),
    ]);
    expect(probes.errors.map((e) => e.resolved === true)).toEqual([true, true]);
  });

  it("a model that failed works again at its next call, not only at its next finished answer", () => {
    const probes = probeMessages([
      { role: "assistant", content: [], stopReason: "error", errorMessage: "You've hit your limit · resets 5am" },
      bash("a", "ls"),
      result("a", "bash", "a.txt"),
    ]);
    expect(probes.errors.map((e) => [e.detail, e.resolved === true])).toEqual([["model call", true]]);
  });

  it("a script that reports errors while exiting 0 failed, by its error line; a look-up's output is content", () => {
    const output = "Syncing 31 logs\nError processing a.jsonl: bad escape \\U at position 2\n0 synced";
    expect(probeMessages([bash("a", "python scripts/sync.py"), result("a", "bash", output)]).errors.map((e) => e.text)).toEqual([
      "Error processing a.jsonl: bad escape \\U at position 2",
    ]);
    expect(probeMessages([bash("b", "cat notes.log"), result("b", "bash", output)]).errors).toEqual([]);
  });

  it("the output of a command the user ran through the harness fails like theirs", () => {
    const injected = (text: string): ContextMessage => ({ role: "custom", customType: INJECTED_TEXT_TYPE, content: text, display: false });
    const probes = probeMessages([
      injected("<command-name>/login</command-name>\n<command-args></command-args>"),
      injected("<local-command-stdout>Login failed: could not reach the server</local-command-stdout>"),
      injected("<command-name>/export</command-name>"),
      injected("<local-command-stdout>Conversation exported to: chat.txt</local-command-stdout>"),
    ]);
    expect(probes.errors.map((e) => [e.detail, e.text, e.resolved === true])).toEqual([
      ["/login", "Login failed: could not reach the server", false],
    ]);
  });

  it("a `which` that finds nothing is a look-up that failed; a silent one says nothing; `&& echo` is no part of the action", () => {
    const probes = probeMessages([
      bash("a", "which fzf bat 2>/dev/null"),
      result("a", "bash", "Exit code 1\nfzf not found\nbat not found", true),
    ]);
    expect(probes.errors.map((e) => [e.text, e.resolved === true])).toEqual([["fzf not found", false]]);
    const echoed = probeMessages([
      bash("b", 'python3 -c "import yaml" && echo "valid"'),
      result("b", "bash", "Traceback (most recent call last):\nModuleNotFoundError: No module named 'yaml'", true),
      bash("c", 'python3 -c "import yaml" && echo "NOW valid"'),
      result("c", "bash", "NOW valid"),
    ]);
    expect(echoed.errors.map((e) => e.resolved === true)).toEqual([true]);
  });

  it("another approach to the same goal fixes a failure: a later success of the same program and subcommand", () => {
    const probes = probeMessages([
      bash("a", "git push 2>&1"),
      result("a", "bash", "fatal: The current branch x has no upstream branch.", true),
      bash("b", "git push --set-upstream origin x"),
      result("b", "bash", "branch 'x' set up to track 'origin/x'."),
      bash("c", "python3 a.py"),
      result("c", "bash", "Traceback (most recent call last):\nValueError: bad input", true),
      bash("d", "python3 b.py"),
      result("d", "bash", "ok"),
    ]);
    expect(probes.errors.map((e) => [e.text, e.resolved === true])).toEqual([
      ["fatal: The current branch x has no upstream branch.", true],
      ["ValueError: bad input", false],
    ]);
  });
});

describe("repair: only what the probes are sure of", () => {
  const messages = [
    user("What color are the codeblocks using? should be 8ABeB7. Never touch migrations/."),
    user("no, the block should stay as is"),
    bash("a", "npm test"),
    result("a", "bash", "TypeError: x is undefined\n    at f (a.js:1:1)\n    at g (a.js:2:1)", true),
    bash("b", "npm test"),
    result("b", "bash", "all green"),
    bash("c", "npm run build"),
    result("c", "bash", "Error: Cannot find module 'esbuild'\nexit code 1", true),
  ];

  it("appends the rule and the error still standing, never a fragment, an answer or a fixed error", () => {
    const { summary, added } = repairSummary("The user and the assistant worked on the code.", probeMessages(messages), 4096);
    expect(summary).toContain("- User constraint: Never touch migrations/.");
    expect(summary).toContain("Error (npm run build): `Error: Cannot find module 'esbuild'`");
    expect(summary).not.toMatch(/8ABeB7|stay as is|x is undefined/);
    expect(added).toEqual({ files: 0, errors: 1, constraints: 1 });
  });

  it("the report says what it could not judge", () => {
    const probes = probeMessages([...messages, user("md link is actually 666666"), user("I think we should avoid global state.")]);
    const report = checkRetention("Never touch migrations/.", probes);
    expect(report.unjudged).toEqual({ requests: 1, constraints: 1 });
    expect(formatRetention(report)).toMatch(/; not judged: 1 user message, 1 rule-like sentence$/);
  });
});
