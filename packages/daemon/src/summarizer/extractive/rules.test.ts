/**
 * The rules the extractive summarizer follows on real sessions (docs/retention.md): goals from
 * real requests, corrections override decisions, decisions are sentences, constraints from the
 * user only, Next Steps from the plan and open requests, no junk anywhere.
 */
import { describe, expect, it } from "vitest";
import { junkLines } from "@base-context/core";
import { assistant, tool, user } from "./fixtures.js";
import { extractiveSummary } from "./index.js";

const summarize = (messages: Parameters<typeof extractiveSummary>[0]["messages"]) =>
  extractiveSummary({ kind: "history", messages, maxTokens: 13_107 });

function section(summary: string, heading: string): string {
  const start = summary.indexOf(`${heading}\n`);
  const rest = summary.slice(start + heading.length + 1);
  const next = rest.search(/^#{2,3} /m);
  return next < 0 ? rest : rest.slice(0, next);
}

describe("extractive summarizer rules", () => {
  it("takes the goal from the user's real request, not a slash command or a one-word command", () => {
    const summary = summarize([
      user("/mode"),
      user("ls"),
      user("Make the theme follow the OS setting"),
      assistant("Done, the theme now follows the OS."),
    ]);
    expect(section(summary, "## Goal").trim()).toBe("Current task: Make the theme follow the OS setting");
    expect(summary).not.toContain("/mode");
    expect(summary).not.toContain("Later request: Ls");
  });

  it("drops a decision the user rejected and records the correction in its place", () => {
    const summary = summarize([
      user("Typed messages get lost while the agent streams; keep them."),
      assistant("The fix is to use `queueMessage` on the agent session so the text waits for the turn to end."),
      user("wait, this doesn't look right. No, we want to put it in pendingMessageContainer so the user can edit it."),
      assistant("Understood: I decided to keep queued text in `pendingMessageContainer` instead of the agent session."),
    ]);
    const decisions = section(summary, "## Key Decisions");
    expect(decisions).not.toContain("queueMessage");
    expect(decisions).toContain("User correction: No, we want to put it in pendingMessageContainer so the user can edit it.");
    expect(decisions).toContain("I decided to keep queued text in `pendingMessageContainer` instead of the agent session.");
  });

  it("never lists a heading, a bold label or a checkmark as a decision or as done", () => {
    const summary = summarize([
      user("Find why the build is slow and fix it"),
      assistant(
        "## Root Cause Analysis\n\n**The fix is**\n\nWe went with esbuild because tsc type-checks on every build.\n\n✓ Done.\n\n✓ Split into modules:",
      ),
    ]);
    expect(section(summary, "## Key Decisions")).toContain("- **We went with esbuild**: because tsc type-checks on every build.");
    expect(summary).not.toMatch(/Root Cause|The fix is\*\*|✓ Done|Split into modules:/);
    expect(junkLines(summary)).toEqual([]);
  });

  it("takes constraints from user messages only, the first sentence included", () => {
    const summary = summarize([
      user("Never touch migrations/ while fixing the cart total."),
      assistant("We must always run the linter, and we should never skip tests."),
    ]);
    const constraints = section(summary, "## Constraints & Preferences");
    expect(constraints).toContain("- Never touch migrations/ while fixing the cart total.");
    expect(constraints).not.toContain("linter");
  });

  it("builds Next Steps from the latest plan, never from an empty search, a sleep or a tool that exited non-zero as designed", () => {
    const summary = summarize([
      user("Remove the console logging from the server"),
      ...tool("bash", { command: 'grep -n "console" src/server.ts' }, "\n\nCommand exited with code 1", { isError: true }),
      ...tool("bash", { command: 'sleep 5 && echo "Done sleeping"' }, "Command exited with code 143", { isError: true }),
      ...tool("bash", { command: "test -f dist/server.js" }, "Command exited with code 1", { isError: true }),
      assistant("There is no console logging left in src/server.ts. I'll check the worker next."),
    ]);
    const next = section(summary, "## Next Steps");
    expect(next.trim()).toBe("1. I'll check the worker next.");
    expect(section(summary, "### Blocked").trim()).toBe("- (none)");
    expect(summary).not.toContain("sleep 5");
  });

  it("keeps no code, minified source or base64 in any section, and the error line of a minified failure", () => {
    const minified = `!function(e){var t={};function n(r){return t[r]}}${"var a=document.documentElement;".repeat(40)}`;
    const summary = summarize([
      user("Build the bundle and fix what breaks"),
      ...tool(
        "bash",
        { command: "npm run build" },
        `${minified}\n\nReferenceError: localStorage is not defined\n    at dist/index.js:1:8841\n    at prerender (scripts/prerender.mjs:41:7)\n\nCommand exited with code 1`,
        { isError: true },
      ),
      ...tool(
        "read",
        { path: "assets/logo.png" },
        `\u0089PNG\r\n${"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA".repeat(20)}`,
      ),
      assistant("const total = items.reduce((a, b) => a + b, 0);\nI'll move the localStorage read into an effect."),
    ]);
    expect(junkLines(summary)).toEqual([]);
    expect(summary).toContain("`ReferenceError: localStorage is not defined`");
    expect(summary).not.toContain("function(e)");
    expect(summary).not.toContain("iVBORw0KGgo");
  });

  it("writes no empty items", () => {
    const summary = summarize([user("Tidy the README"), assistant("✓\n\n- \n\nDone.")]);
    expect(junkLines(summary)).toEqual([]);
  });
});
