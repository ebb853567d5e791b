/**
 * When a failure stops standing (docs/retention.md "Fixed or standing"), one category per case:
 * the same action run another way, a password the agent cannot type, a status that says nothing,
 * a task the user stopped, a file reached another way, a command written wrong, a log record at an
 * error level, the same content written elsewhere, "the build passes" about building only. Small
 * invented cases; the probes and the extractive summarizer read them through the same tracker.
 */
import type { ContextMessage } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { INJECTED_TEXT_TYPE } from "../injected.js";
import { resultMessage as result, sayMessage as say } from "../test-support.js";
import { isLookupCommand } from "./lookups.js";
import { probeMessages } from "./probes.js";
import { carriedProbes, lostItems } from "./repair.js";
import { commandKey, programRun } from "./resolution.js";
import { readRequest } from "./user-text.js";

const bash = (id: string, command: string): ContextMessage => say("", [[id, "Bash", { command }]]);
const injected = (text: string): ContextMessage => ({ role: "custom", customType: INJECTED_TEXT_TYPE, content: text, display: false });
const standing = (messages: ContextMessage[]) => probeMessages(messages).errors.filter((e) => e.resolved !== true).map((e) => e.text);
const NO_TERMINAL = "sudo: a terminal is required to read the password; either use the -S option or configure an askpass helper";

describe("the same action, however it is run", () => {
  it("is the program it runs: without sudo, env, timeout or nice, and by its name, not its path", () => {
    expect(programRun("sudo -E env FOO=1 ./build/bin/indexer --all")).toBe("indexer --all");
    expect(programRun('env "PATH=/opt/x bin:$PATH" timeout 5 nice -n 5 /usr/local/bin/indexer')).toBe("indexer");
    expect(commandKey("cd app && sudo make install 2>&1 | tail -5")).toBe("make install");
    // A folder, or an assignment alone, is what it is.
    expect(programRun("X=$(cat a.txt)")).toBe("X=$(cat a.txt)");
  });

  it("run again under sudo, failing for another reason, supersedes the first failure; the latest stands", () => {
    const errors = standing([
      bash("a", "indexer --rebuild"),
      result("a", "Bash", "Exit code 1\nPermissionError: [Errno 13] Permission denied: '/var/lib/indexer/db'", true),
      bash("b", "sudo indexer --rebuild"),
      result("b", "Bash", `Exit code 1\n${NO_TERMINAL}`, true),
    ]);
    expect(errors).toEqual([NO_TERMINAL]);
  });

  it("run by its full path, failing for another reason, supersedes the failure of running it by name", () => {
    const errors = standing([
      bash("a", "indexer status"),
      result("a", "Bash", "Exit code 127\nzsh: command not found: indexer", true),
      bash("b", "/opt/indexer/bin/indexer status"),
      result("b", "Bash", "Exit code 1\nindexer: database locked", true),
    ]);
    expect(errors).toEqual(["indexer: database locked"]);
  });

  it("the same program and subcommand failing later for another reason supersedes the chained command's failure", () => {
    const errors = standing([
      bash("a", "git add src/a.ts && git commit -m 'wip'"),
      result("a", "Bash", "Exit code 1\nhook failed: lint: 3 problems in src/a.ts", true),
      bash("b", "git commit -m 'wip'"),
      result("b", "Bash", "Exit code 1\nhook failed: tests: 1 of 40 failed", true),
    ]);
    expect(errors).toEqual(["hook failed: tests: 1 of 40 failed"]);
  });

  it("a run of the same program and subcommand on other targets is other work: each failure stands", () => {
    const errors = standing([
      bash("a", "npm test -- parser"),
      result("a", "Bash", "Exit code 1\nFAIL parser.test.ts: expected 3 tokens, got 2", true),
      bash("b", "npm test -- lexer"),
      result("b", "Bash", "Exit code 1\nFAIL lexer.test.ts: unterminated string at 4:2", true),
      bash("c", "git push"),
      result("c", "Bash", "Exit code 128\nfatal: The current branch feature has no upstream branch.", true),
      bash("d", "git push -u origin feature"),
      result("d", "Bash", "Exit code 1\nerror: failed to push some refs to 'origin'", true),
    ]);
    expect(errors).toEqual([
      "FAIL parser.test.ts: expected 3 tokens, got 2",
      "FAIL lexer.test.ts: unterminated string at 4:2",
      "error: failed to push some refs to 'origin'",
    ]);
  });

  it("its last part working on its own reached what the whole command was for", () => {
    const probes = probeMessages([
      bash("a", "source ~/.toolchain/env && tool --version"),
      result("a", "Bash", "Exit code 127\nsource: no such file or directory: /home/me/.toolchain/env", true),
      bash("b", 'export PATH="$HOME/.toolchain/bin:$PATH" && tool --version'),
      result("b", "Bash", "tool 1.2.0"),
    ]);
    expect(probes.errors.map((e) => e.resolved === true)).toEqual([true]);
  });
});

describe("a command that needed the user's password", () => {
  it("failed wherever sudo says so, even when the command's own status was 0", () => {
    const probes = probeMessages([bash("a", "sudo ./server --port 80 &\nsleep 2\ncurl -s localhost"), result("a", "Bash", `Touch key\n${NO_TERMINAL}`)]);
    expect(probes.errors.map((e) => e.text)).toEqual([NO_TERMINAL]);
  });

  it("stands until it runs: later work, even another look-up that works, does not resolve it", () => {
    const failed = [bash("a", "sudo cat /sys/class/sensor/raw"), result("a", "Bash", `Exit code 1\n${NO_TERMINAL}`, true)];
    expect(standing([...failed, bash("b", "ls /sys/class/sensor"), result("b", "Bash", "raw\nname")])).toEqual([NO_TERMINAL]);
    expect(standing([...failed, bash("c", "cat /sys/class/sensor/raw"), result("c", "Bash", "42")])).toEqual([]);
  });
});

describe("what a later failure says", () => {
  it("an exit status alone cannot say the earlier error is gone: both stand", () => {
    const errors = standing([
      bash("a", "timeout 3 ./target/app 2>&1 || true"),
      result("a", "Bash", "\u001b[2m2031-04-01T10:00:00Z\u001b[0m \u001b[31mERROR\u001b[0m app::sensor: read failed: no access to counter"),
      bash("b", "timeout 5 ./target/app"),
      result("b", "Bash", "Exit code 124\n2031-04-01T10:00:05Z  INFO app: started", true),
    ]);
    expect(errors).toEqual(["read failed: no access to counter", "Exit code 124"]);
  });

  it("a log record at an error level is the program reporting a failure; a look-up's output is content", () => {
    const log = "[INFO] started\n[ERROR] cache: could not open /var/cache/app";
    expect(probeMessages([bash("a", "./app --once"), result("a", "Bash", log)]).errors.map((e) => e.text)).toEqual([
      "could not open /var/cache/app",
    ]);
    expect(probeMessages([bash("b", "tail -20 app.log"), result("b", "Bash", log)]).errors).toEqual([]);
  });

  it("an error reported under a warning's label is an error; a warning alone is not", () => {
    const warned = "Converted 40 files\nWarning: Error reading notes/b.md: invalid byte 0xff at offset 12\nDone";
    expect(probeMessages([bash("a", "./convert --all"), result("a", "Bash", warned)]).errors.map((e) => e.text)).toEqual([
      "Warning: Error reading notes/b.md: invalid byte 0xff at offset 12",
    ]);
    expect(probeMessages([bash("b", "./convert --all"), result("b", "Bash", "Warning: 2 files skipped (empty)\nDone")]).errors).toEqual([]);
  });

  it("a failure reaching a file is superseded by a later one reaching it, or a glob covering it", () => {
    const errors = standing([
      bash("a", "/usr/bin/toolctl status"),
      result("a", "Bash", "Exit code 127\n(eval):1: no such file or directory: /usr/bin/toolctl", true),
      bash("b", "ls -la /usr/bin/tool*"),
      result("b", "Bash", "Exit code 1\n(eval):1: no matches found: /usr/bin/tool*", true),
    ]);
    expect(errors).toEqual(["(eval):1: no matches found: /usr/bin/tool*"]);
  });
});

describe("what stands only until the work goes on", () => {
  it("a command the shell could not parse never ran: the next command that works goes on", () => {
    const failed = [bash("a", "A=$(cat /tmp/a) && echo $((A+1)"), result("a", "Bash", "Exit code 1\n(eval):1: parse error near `('", true)];
    expect(standing(failed)).toEqual(["(eval):1: parse error near '('"]);
    expect(standing([...failed, bash("b", "python3 -c 'print(1)'"), result("b", "Bash", "1")])).toEqual([]);
  });

  it("a loop over reading commands is a look-up", () => {
    expect(isLookupCommand('for d in /sys/class/net/*; do echo "$d" && cat $d/operstate; done')).toBe(true);
    expect(isLookupCommand("for f in *.log; do rm $f; done")).toBe(false);
  });

  it("but when the user interrupts the turn, what stood then stays standing: the work did not go on", () => {
    const lookup = [bash("a", "which fanctl"), result("a", "Bash", "Exit code 1\nfanctl not found", true)];
    const next = [bash("b", "npm run build"), result("b", "Bash", "built")];
    expect(standing([...lookup, ...next])).toEqual([]);
    expect(standing([...lookup, injected("[Request interrupted by user]"), ...next])).toEqual(["fanctl not found"]);
    expect(standing([...lookup, injected("[Request interrupted by user]"), bash("c", "which fanctl"), result("c", "Bash", "/usr/bin/fanctl")])).toEqual([]);
  });

  it("the notice after a refused call is the refusal, not a stop: the work that follows answers both", () => {
    const refused = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file).";
    const errors = standing([
      bash("a", "which fanctl"),
      result("a", "Bash", "Exit code 1\nfanctl not found", true),
      bash("b", "rm -rf build"),
      result("b", "Bash", refused, true),
      injected("[Request interrupted by user for tool use]"),
      bash("c", "npm run build"),
      result("c", "Bash", "built"),
    ]);
    expect(errors).toEqual([]);
  });
});

describe("a change done another way", () => {
  const plan = "# Plan\n\nStep one: move the nightly cron job to the new host.\nStep two: point the backups at the new bucket and check one restore.\n";

  it("the same content written elsewhere is the refused write done; the attempts to unblock it go with it", () => {
    const probes = probeMessages([
      say("", [["a", "Write", { file_path: "/home/me/.config/app/plans/p.md", content: plan }]]),
      result("a", "Write", "EACCES: permission denied, open '/home/me/.config/app/plans/p.md'", true),
      bash("b", "sudo chown -R me /home/me/.config/app/plans"),
      result("b", "Bash", `Exit code 1\n${NO_TERMINAL}`, true),
      say("", [["c", "Write", { file_path: "/tmp/p.md", content: plan }]]),
      result("c", "Write", "File created successfully at: /tmp/p.md"),
    ]);
    expect(probes.errors.map((e) => [e.detail, e.resolved === true])).toEqual([
      ["/home/me/.config/app/plans/p.md", true],
      ["sudo chown -R me /home/me/.config/app/plans", true],
    ]);
  });

  it("other content written elsewhere is another change: the refused one stands", () => {
    const errors = standing([
      say("", [["a", "Write", { file_path: "/etc/app.conf", content: plan }]]),
      result("a", "Write", "EACCES: permission denied, open '/etc/app.conf'", true),
      say("", [["b", "Write", { file_path: "/tmp/notes.md", content: `${plan}\nStep three: something else entirely, written for another purpose.` }]]),
      result("b", "Write", "File created successfully at: /tmp/notes.md"),
    ]);
    expect(errors).toEqual(["EACCES: permission denied, open '/etc/app.conf'"]);
  });
});

describe("an earlier summary's standing errors", () => {
  const carried = carriedProbes("## Critical Context\n- Error (./sync.sh --all 2>&1 | tail -20): `Warning: Error reading notes/b.md: invalid byte`\n").errors;

  it("are read with the range: the same command working fixes them, so repair does not list them again", () => {
    const fixed = probeMessages([bash("a", "./sync.sh --all"), result("a", "Bash", "Synced 40 files")], carried);
    expect(fixed.errors.map((e) => [e.text, e.resolved === true])).toEqual([["Warning: Error reading notes/b.md: invalid byte", true]]);
    expect(lostItems("## Goal\nSync the notes.", fixed).errors).toEqual([]);
  });

  it("and stand while the range does not fix them", () => {
    const open = probeMessages([bash("b", "git status"), result("b", "Bash", "nothing to commit")], carried);
    expect(open.errors.map((e) => [e.text, e.resolved === true])).toEqual([["Warning: Error reading notes/b.md: invalid byte", false]]);
  });
});

describe("the assistant saying it is fixed", () => {
  it("'the build passes' is about building and testing: not about a command that does something else", () => {
    const failed = [
      bash("a", "sudo setcap cap_net_raw=ep ./probe"),
      result("a", "Bash", "Exit code 1\nsetcap: failed to set capabilities on file './probe': Operation not permitted", true),
      bash("b", "cargo build"),
      result("b", "Bash", "error[E0425]: cannot find value `x` in this scope\nExit code 101", true),
    ];
    const errors = standing([...failed, say("Fixed it: the build succeeds now.")]);
    expect(errors).toEqual(["setcap: failed to set capabilities on file './probe': Operation not permitted"]);
  });
});

describe("the human's words in a question tool's result", () => {
  const asked = say("", [
    [
      "q",
      "AskUserQuestion",
      {
        questions: [
          { question: "Include archived rows?", options: [{ label: "Yes, include them" }, { label: "No, current rows only" }] },
          { question: "Export to which format?", options: [{ label: "CSV" }, { label: "JSON" }] },
        ],
      },
    ],
  ]);

  it("an option picked from those offered is a choice, not a request; words typed instead of one may ask for work", () => {
    const answered = (answers: string) => probeMessages([asked, result("q", "AskUserQuestion", `User has answered your questions: ${answers}`)]);
    expect(answered('"Include archived rows?"="Yes, include them", "Export to which format?"="CSV"').requests).toEqual([]);
    const typed = answered('"Include archived rows?"="No, current rows only", "Export to which format?"="make it a PDF report instead, then add tests"');
    expect(typed.requests.map((r) => r.text)).toEqual(["make it a PDF report instead, then add tests"]);
  });
});

describe("requests", () => {
  it.each(["prove that the cache is hit!", "double-check the totals"])("an imperative to show that something holds asks for work: %s", (text) =>
    expect(readRequest(text)).toBe("yes"),
  );

  it.each(["do you have a list of the slowest queries from last night?", "is there a way to list the open ports?"])(
    "a question asking the agent to get or find something asks for work: %s",
    (text) => expect(readRequest(text)).toBe("yes"),
  );
});
