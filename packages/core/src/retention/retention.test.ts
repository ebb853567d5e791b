import type { ContextMessage } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { resultMessage, sayMessage as say } from "../test-support.js";
import { checkRetention, formatRetention } from "./check.js";
import { errorLine, exitedAsDesigned } from "./errors.js";
import { junkKind, junkLines } from "./junk.js";
import { mergeProbes, probeMessages } from "./probes.js";
import { carriedProbes, repairSummary, retainSummary } from "./repair.js";

const user = (content: string): ContextMessage => ({ role: "user", content });
const result = resultMessage;

describe("probes", () => {
  it("files: read and modified, a file read then changed counts once as modified", () => {
    const probes = probeMessages([
      say("", [
        ["c1", "read", { path: "src/a.ts" }],
        ["c2", "read_file", { file_path: "src/b.ts" }],
      ]),
      say("", [["c3", "edit", { path: "src/a.ts", oldText: "x", newText: "y" }]]),
    ]);
    expect(probes.files.map((f) => [f.text, f.detail])).toEqual([
      ["src/a.ts", "modified"],
      ["src/b.ts", "read"],
    ]);
  });

  it("errors: flagged results, real non-zero exits and stack traces; not an empty grep, not sleep", () => {
    const probes = probeMessages([
      say("", [["c1", "bash", { command: "npm test" }]]),
      result(
        "c1",
        "bash",
        "> vitest run\n\nTypeError: cannot read property 'amount' of undefined\n    at total (src/cart.ts:12:9)\n    at run (src/main.ts:3:1)\n\nCommand exited with code 1",
        true,
      ),
      say("", [["c2", "bash", { command: 'grep -n "console" src/*.ts' }]]),
      result("c2", "bash", "\n\nCommand exited with code 1", true),
      say("", [["c3", "bash", { command: 'sleep 5 && echo "Done sleeping"' }]]),
      result("c3", "bash", "Command exited with code 143", true),
      say("", [["c4", "grep", { pattern: "TODO" }]]),
      result("c4", "grep", "No matches found", true),
      say("", [["c5", "read", { path: "missing.ts" }]]),
      result("c5", "read", "ENOENT: no such file or directory, open 'missing.ts'", true),
      {
        role: "bashExecution",
        command: "pnpm build",
        output: "src/x.ts(3,1): error TS2304: Cannot find name 'foo'.",
        exitCode: 2,
        cancelled: false,
        truncated: false,
      },
      { role: "bashExecution", command: "test -f out.txt", output: "", exitCode: 1, cancelled: false, truncated: false },
    ]);
    expect(probes.errors.map((e) => e.text)).toEqual([
      "TypeError: cannot read property 'amount' of undefined",
      "ENOENT: no such file or directory, open 'missing.ts'",
      "src/x.ts(3,1): error TS2304: Cannot find name 'foo'.",
    ]);
  });

  it("errors: the exception line of a Python traceback, long unbroken runs shortened", () => {
    expect(errorLine("Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    main()\nKeyError: 'user_id'")).toBe(
      "KeyError: 'user_id'",
    );
    expect(errorLine(`SyntaxError: Unexpected token in ${"x".repeat(300)}`)).toBe(`SyntaxError: Unexpected token in ${"x".repeat(40)}…`);
    expect(exitedAsDesigned("cd src && rg foo", 1, "")).toBe(true);
    expect(exitedAsDesigned("rg foo", 2, "rg: error: regex parse error")).toBe(false);
  });

  it("requests: in the user's words; slash commands, one-word commands and acknowledgements are not goals", () => {
    const probes = probeMessages([
      user("/mode"),
      user("ls"),
      user("Add a retry to the uploader. Never touch migrations/."),
      user("ok"),
      user("Great. Now make the timeout configurable"),
    ]);
    expect(probes.requests.map((r) => r.text)).toEqual([
      "Add a retry to the uploader. Never touch migrations/.",
      // As written: the acknowledgement is the user's words too, and a label copied from the session matches it.
      "Great. Now make the timeout configurable",
    ]);
  });

  it("constraints: user messages only, the first sentence included", () => {
    const probes = probeMessages([
      user("Never touch migrations/ in this task. Fix the cart total."),
      say("We must not break the API. You should always run the tests."),
      user("Only use the standard library, please. Why does it fail?"),
    ]);
    expect(probes.constraints.map((c) => c.text)).toEqual([
      "Never touch migrations/ in this task.",
      "Only use the standard library, please.",
    ]);
  });

  it("plan: the last stated plan, or the question the assistant ended on", () => {
    expect(
      probeMessages([user("fix it please"), say("I'll add the index next, then rerun the migration.")]).plan.map((p) => p.text),
    ).toEqual(["I'll add the index next, then rerun the migration."]);
    expect(
      probeMessages([user("fix it please"), say("Done with the parser. Should I also update the docs?")]).plan.map((p) => p.text),
    ).toEqual(["Should I also update the docs?"]);
    // Answered: no open question any more.
    expect(probeMessages([say("Should I also update the docs?"), user("yes")]).plan).toEqual([]);
  });
});

describe("checking a summary", () => {
  const probes = probeMessages([
    user("Refactor the cart totals. Never touch migrations/ in this task."),
    say("", [
      ["c1", "read", { path: "/srv/shop/src/cart/total.ts" }],
      ["c2", "edit", { path: "src/cart/tax.ts", oldText: "a", newText: "b" }],
    ]),
    result("c1", "read", "TypeError: cannot read property 'amount' of undefined\n    at a (x.ts:1:1)\n    at b (y.ts:2:2)"),
  ]);

  it("counts kept and missing items per kind, with paths matched by a suffix that keeps a directory", () => {
    const report = checkRetention("## Goal\nRefactor the cart totals\n- Modified `cart/total.ts` and tax.ts", probes);
    expect(report.files).toEqual({ kept: 1, total: 2 });
    expect(report.missing.files).toEqual(["src/cart/tax.ts"]);
    expect(report.errors).toEqual({ kept: 0, total: 1 });
    expect(report.requests).toEqual({ kept: 1, total: 1 });
    expect(report.constraints).toEqual({ kept: 0, total: 1 });
    expect(formatRetention(report)).toBe("kept 1/2 files, 0/1 errors, 0/1 constraints, 1/1 requests");
  });

  it("a reworded request counts when one line holds most of its distinctive words", () => {
    const report = checkRetention(
      "The user wants the cart totals refactored.",
      probeMessages([user("Please refactor how cart totals are computed")]),
    );
    expect(report.requests.kept).toBe(1);
  });
});

describe("repair", () => {
  const probes = probeMessages([
    user("Fix the cart. Never touch migrations/ in this task."),
    say("", [["c1", "edit", { path: "src/cart.ts", oldText: "a", newText: "b" }]]),
    result("c1", "edit", "Error: oldText not found in src/cart.ts", true),
  ]);

  it("appends what a one-line summary lost under Critical Context, before the file lists", () => {
    const repaired = repairSummary("Fixed the cart.\n\n<modified-files>\nother.ts\n</modified-files>", probes, 1024);
    expect(repaired.added).toEqual({ files: 1, errors: 1, constraints: 1 });
    expect(repaired.summary).toBe(
      "Fixed the cart.\n\n## Critical Context\n- User constraint: Never touch migrations/ in this task.\n- Error (src/cart.ts): `Error: oldText not found in src/cart.ts`\n- File modified: `src/cart.ts`\n\n<modified-files>\nother.ts\n</modified-files>",
    );
    const report = checkRetention(repaired.summary, probes);
    expect([report.files.kept, report.errors.kept, report.constraints.kept]).toEqual([1, 1, 1]);
  });

  it("replaces the (none) placeholder of an existing section and keeps the sections after it", () => {
    const text =
      "## Goal\nFix the cart\n\n## Critical Context\n- (none)\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\nx";
    const { summary } = repairSummary(text, probes, 1024);
    expect(summary).toContain("## Critical Context\n- User constraint: Never touch migrations/ in this task.\n- Error");
    expect(summary).not.toContain("(none)");
    expect(summary).toMatch(/File modified: `src\/cart.ts`\n\n---\n\n\*\*Turn Context/);
  });

  it("is idempotent over three iterative summaries: carried items are checked again, never appended twice", () => {
    let previous: string | undefined;
    const ranges = [
      probes,
      probeMessages([user("Also add tax. Always round half up."), say("", [["c2", "write", { path: "src/tax.ts", content: "x" }]])]),
      probeMessages([
        user("Now the receipts page please"),
        say("", [["c3", "bash", { command: "pnpm test" }]]),
        result("c3", "bash", "FAIL src/receipt.test.ts\nAssertionError: expected 3 to be 4\n\nCommand exited with code 1", true),
      ]),
    ];
    for (const range of ranges) {
      const all = mergeProbes(carriedProbes(previous), range);
      // A weak summarizer that keeps only what it was told last time, reworded.
      const { summary, retention } = retainSummary(previous ? `${previous.split("\n")[0]}\nMore work.` : "Fixed the cart.", all, {
        repair: true,
        budgetTokens: 1024,
        maxBytes: 1024 * 1024,
      });
      expect([retention.files.kept, retention.errors.kept, retention.constraints.kept]).toEqual([
        all.files.length,
        all.errors.length,
        all.constraints.length,
      ]);
      previous = summary;
    }
    for (const line of previous!.split("\n").filter((l) => l.startsWith("- "))) {
      expect(previous!.split(line).length - 1, line).toBe(1);
    }
    expect(previous).toContain("User constraint: Always round half up.");
    expect(previous).toContain("`AssertionError: expected 3 to be 4`");
    expect(previous).toContain("File modified: `src/tax.ts`");
    // Repairing a repaired summary adds nothing.
    expect(repairSummary(previous!, mergeProbes(carriedProbes(previous), ranges[2]!), 1024).added).toEqual({
      files: 0,
      errors: 0,
      constraints: 0,
    });
  });

  it("carries a previous summary's constraints, repaired lines and file lists, not its placeholders", () => {
    const previous =
      "## Constraints & Preferences\n- None stated\n- Keep the API stable\n\n## Critical Context\n- Error (pnpm test): `AssertionError: expected 1 to be 2`\n- File read: `notes/a.md`\n\n<modified-files>\nsrc/b.ts\n</modified-files>";
    const carried = carriedProbes(previous);
    expect(carried.constraints.map((c) => c.text)).toEqual(["Keep the API stable"]);
    expect(carried.errors.map((e) => [e.text, e.detail])).toEqual([["AssertionError: expected 1 to be 2", "pnpm test"]]);
    expect(carried.files.map((f) => [f.text, f.detail])).toEqual([
      ["notes/a.md", "read"],
      ["src/b.ts", "modified"],
    ]);
  });

  it("stays within its budget", () => {
    const many = probeMessages([
      say(
        "",
        Array.from(
          { length: 200 },
          (_, i) => [`c${i}`, "read", { path: `src/module_${i}/index.ts` }] as [string, string, Record<string, unknown>],
        ),
      ),
    ]);
    const repaired = repairSummary("x", many, 100);
    expect(repaired.summary.length).toBeLessThan(100 * 4 + 40);
    expect(repaired.skipped).toBeGreaterThan(0);
  });
});

describe("junk", () => {
  it.each([
    ["const total = items.reduce((a, b) => a + b, 0);", "code"],
    ["import { x } from './y';", "code"],
    ["**## Root Cause Analysis**", "heading"],
    ["**The fix is**", "heading"],
    ["Split into modules:", "heading"],
    ["✓ Done.", "empty"],
    ["", "empty"],
    [`Blocked: ${"QUJD".repeat(30)}`, "data"],
    ["!function(e){var t={};function n(r){if(t[r])return t[r].exports}}", "code"],
  ])("%s is %s", (line, kind) => {
    expect(junkKind(line)).toBe(kind);
  });

  it.each([
    ["defp expand_control_for(line, expand_groups) do", "code"],
    ["_ -> nil", "code"],
    ["{:ok, result} -> result", "code"],
    ["end", "code"],
    ['{:jason, "~> 1.4"},', "code"],
    ["@spec setup() :: :ok", "code"],
    ["fn main() {", "code"],
    ["│   ├── print-mode.ts # Already here", "tree"],
    ["+-- src/index.ts", "tree"],
    ["at Object.<anonymous> (/srv/app/index.js:3:14)", "stack frame"],
    ["lib/app_web/controllers/page_controller.ex:57:13", "stack frame"],
  ])("%s is %s", (line, kind) => {
    expect(junkKind(line)).toBe(kind);
  });

  it.each([
    "For each test, report: ✅ Full access | ⚠️ Partial/read-only | ❌ Denied",
    "Request: no, dimGray should be that, no need for linkGray,",
    "what should we do",
    "import the data from the old file first",
    "Current task: Implement the billing epic",
  ])("%s is prose, not code", (line) => {
    expect(junkKind(line)).toBeUndefined();
  });

  it.each([
    "Modified `src/auth/middleware.ts` (edit ×2)",
    "`pnpm test` (exit 1): `TypeError: cannot read property 'amount' of undefined`",
    "Use `jose`, not `jsonwebtoken`.",
    "(none)",
    "File read: `packages/daemon/src/core/retention/check.ts`",
  ])("%s is fine", (line) => {
    expect(junkKind(line)).toBeUndefined();
  });

  it("reads items from a structured summary, not its headings or file lists", () => {
    expect(junkLines("## Goal\nx y\n\n## Progress\n### Done\n- [x] ✓ Done.\n\n<read-files>\nconst a = 1;\n</read-files>")).toEqual([
      { line: "✓ Done.", kind: "empty" },
    ]);
  });
});

describe("retainSummary under limits.maxSummaryBytes", () => {
  const probes = probeMessages([
    user("Fix the checkout. Never change the public API."),
    say("", [
      ["c1", "write", { path: "src/checkout.ts", content: "x" }],
      ["c2", "read", { path: "src/cart.ts" }],
    ]),
  ]);
  // A summary that fits the cap but leaves no room for the repair lines.
  const body = `## Goal\nFix the checkout.\n\n## Progress\n${"worked on it. ".repeat(300)}\n\n## Critical Context\n- (none)`;
  const maxBytes = body.length + 20;

  it("cuts the body to leave room for repair: the report counts only what the stored text holds, with one cut note", () => {
    const { summary, retention } = retainSummary(body, probes, { repair: true, budgetTokens: 1024, maxBytes });
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(maxBytes);
    expect(summary.split("[summary cut at").length - 1).toBe(1);
    expect(summary).toContain(`[summary cut at ${maxBytes} bytes: limits.maxSummaryBytes]`);
    expect(summary).toContain("File modified: `src/checkout.ts`");
    expect(summary).toContain("User constraint: Never change the public API.");
    const stored = checkRetention(summary, probes);
    for (const kind of ["files", "errors", "constraints", "requests", "plan"] as const) expect(retention[kind]).toEqual(stored[kind]);
    expect(retention.files.kept).toBe(retention.files.total);
    expect(retention.repaired).toEqual({ files: 2, errors: 0, constraints: 1 });
  });

  it("caps an over-size summary once even without repair, and reports on the stored text", () => {
    const { summary, retention } = retainSummary(`${body}\n- File modified: \`src/checkout.ts\``, probes, {
      repair: false,
      budgetTokens: 1024,
      maxBytes: 1024,
    });
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(1024);
    expect(summary.split("[summary cut at").length - 1).toBe(1);
    expect(retention.files.kept).toBe(checkRetention(summary, probes).files.kept);
    expect(retention.files.kept).toBe(0);
  });
});
