/**
 * A previous summary brought up to date, not copied (docs/summaries.md "Updating a summary"), and
 * the human's words wherever they are: small cases of each rule the labelled real sessions hold.
 */
import type { ContextMessage } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { assistant, section, tool, toolCall, toolResult, user } from "./fixtures.js";
import { extractiveSummary } from "./index.js";

function summarize(messages: ContextMessage[], previousSummary?: string, followingTurn?: ContextMessage[]): string {
  return extractiveSummary({
    kind: "history",
    messages,
    maxTokens: 13_107,
    ...(previousSummary !== undefined ? { previousSummary } : {}),
    ...(followingTurn !== undefined ? { followingTurn } : {}),
  });
}

const REFUSED =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file).";

/** Claude Code's stored summary: its preamble, its numbered sections, its closing instruction. */
const CLAUDE_CODE_SUMMARY = [
  "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:",
  "Summary:",
  "1. Primary Request and Intent:",
  "   - Implement the billing epic",
  "4. Errors and fixes:",
  "   - **Missing dependency**: added `stripe` to package.json",
  "6. All user messages:",
  '   - "Implement BILL-1 and BILL-2. Never touch the legacy invoices table."',
  '   - "also do BILL-3 when those are done"',
  "7. Pending Tasks:",
  "   - **BILL-2** (in progress): webhook handler, needs tests",
  "   - **BILL-3** (open): refunds",
  "9. Optional Next Step:",
  "   Finish BILL-2's tests.",
  "Please continue the conversation from where we left off without asking the user any further questions. Continue with the last task that you were asked to work on.",
].join("\n");

describe("updating Claude Code's summary", () => {
  const closeBill2 = [...tool("Bash", { command: "bd close BILL-2" }, "Closed BILL-2"), ...tool("Bash", { command: "bd show BILL-3" }, "refunds")];

  it("takes the goal from the human's words it quotes and their rules as constraints; never its harness instructions", () => {
    const summary = summarize(closeBill2, CLAUDE_CODE_SUMMARY);
    expect(section(summary, "## Goal")).toBe(
      "Current task: also do BILL-3 when those are done\nBackground, the first request: Implement BILL-1 and BILL-2. Never touch the legacy invoices table.",
    );
    expect(section(summary, "## Constraints & Preferences")).toBe("- Never touch the legacy invoices table.");
    expect(summary).not.toMatch(/continue the conversation|being continued/i);
    expect(section(summary, "### Done")).toContain("- [x] Fixed earlier: Missing dependency: added `stripe` to package.json");
  });

  it("moves what the part finished to Done and keeps what it did not in progress", () => {
    const summary = summarize(closeBill2, CLAUDE_CODE_SUMMARY);
    expect(section(summary, "### Done")).toContain("- [x] BILL-2 (in progress): webhook handler, needs tests");
    expect(section(summary, "### In Progress")).toBe("- [ ] BILL-3 (open): refunds");
    // Its next step was about what is finished now.
    expect(section(summary, "## Next Steps")).not.toContain("BILL-2");
  });
});

describe("updating our own summary", () => {
  const previous = [
    "## Goal",
    "Current task: Split the server into modules",
    "",
    "## Progress",
    "### Done",
    "- [x] New entry point: `src/main-new.ts`",
    "### In Progress",
    "- [ ] Added the router module",
    "- [ ] Run `npm run build`",
    "- [ ] Document the modules",
    "### Blocked",
    "- `npm test` (exit 1): `Error: cannot find module './db'`",
    "- `npm run lint` (exit 1): `error: unused variable x`",
    "",
    "## Next Steps",
    "1. Fix the failure of `npm test`",
    "",
    "---",
    "",
    "**Turn Context (split turn):**",
    "",
    "## Original Request",
    "now move the db code too",
  ].join("\n");
  const part = [
    ...tool("bash", { command: "git mv src/main-new.ts src/main.ts" }, ""),
    ...tool("bash", { command: "npm run build" }, "built"),
    ...tool("bash", { command: "npm test" }, "12 passing"),
  ];

  it("the split turn's request it ended on is the current task; the task before it is earlier work", () => {
    const summary = summarize(part, previous);
    expect(section(summary, "## Goal")).toBe("Current task: now move the db code too");
    expect(section(summary, "### Done")).toContain("- [x] Earlier task: Split the server into modules");
  });

  it("drops items naming a file the part moved, and says where it went", () => {
    const summary = summarize(part, previous);
    expect(summary).not.toContain("New entry point");
    expect(section(summary, "### Done")).toContain("- [x] Moved `src/main-new.ts` to `src/main.ts`");
  });

  it("moves finished items to Done: a finished action, a step whose command ran; keeps the rest", () => {
    const done = section(summarize(part, previous), "### Done");
    expect(done).toContain("- [x] Added the router module");
    expect(done).toContain("- [x] Run `npm run build`");
    expect(section(summarize(part, previous), "### In Progress")).toBe("- [ ] Document the modules");
  });

  it("keeps a blocker while the part has not resolved it, and drops one the same command now passes", () => {
    const summary = summarize(part, previous);
    expect(section(summary, "### Blocked")).toBe("- `npm run lint` (exit 1): `error: unused variable x`");
    expect(section(summary, "## Next Steps")).toBe("1. Fix the failure of `npm run lint` (under Blocked), then continue the current task.");
  });
});

describe("the human's words wherever they are", () => {
  it("lists the answers to the agent's questions as the user's choices", () => {
    const ask = toolCall("AskUserQuestion", { questions: [{ question: "Public or private?" }] });
    const summary = summarize([
      user("Set up a GitHub repository for the notes"),
      ask.message,
      toolResult(ask.id, "AskUserQuestion", 'User has answered your questions: "Public or private?"="Private". You can now continue.'),
      assistant("Created the private repository."),
    ]);
    expect(section(summary, "## Constraints & Preferences")).toBe('- User\'s answer: "Public or private?"="Private"');
  });

  it("a refused call stands, and the next step is to ask the user; a refusal's typed reason is their request", () => {
    const merge = toolCall("Bash", { command: "git merge --abort" });
    const refused = summarize([user("do sync"), merge.message, toolResult(merge.id, "Bash", `${REFUSED} STOP what you are doing.`, true)]);
    expect(section(refused, "### Blocked")).toBe(
      "- `git merge --abort` (refused by the user): `The user doesn't want to proceed with this tool use. The tool use was rejected`",
    );
    expect(section(refused, "## Next Steps")).toBe("1. Ask the user how to proceed: they refused `git merge --abort`.");
    const push = toolCall("Bash", { command: "git push --force" });
    const reasoned = summarize([
      user("publish the release"),
      push.message,
      toolResult(push.id, "Bash", `${REFUSED} To tell you how to proceed, the user said:\nnever force-push; open a pull request instead`, true),
    ]);
    expect(section(reasoned, "## Goal")).toContain("Current task: never force-push; open a pull request instead");
    expect(section(reasoned, "## Constraints & Preferences")).toBe("- never force-push; open a pull request instead");
  });

  it("a turn that opens with the user's reply keeps the reply with the question it answers", () => {
    const summary = summarize(
      [user("Regenerate every transcript from the raw files"), assistant("Done. The repository moved; shall I update the remote URL?")],
      undefined,
      [user("yes"), ...tool("bash", { command: "git remote set-url origin x" }, "")],
    );
    expect(section(summary, "## Goal")).toBe(
      'Current task: Regenerate every transcript from the raw files Then: "yes" (to: "The repository moved; shall I update the remote URL?").',
    );
  });

  it("has a Goal when nothing reads as a request: what the user said, the first as background", () => {
    const summary = summarize([
      user("how do I configure the launcher? the popup when I hit the super key"),
      assistant("It is configured in the panel settings."),
      user("not the app list, the launcher itself?"),
    ]);
    expect(section(summary, "## Goal")).toBe(
      "Current task: not the app list, the launcher itself?\nBackground, the first request: how do I configure the launcher? the popup when I hit the super key",
    );
  });

  it("once the last request was answered and nothing stands, the next step is the user's next request", () => {
    const summary = summarize([user("Rename the config flag to --strict"), ...tool("edit", { path: "src/cli.ts", oldText: "a", newText: "b" }, "ok"), assistant("Renamed.")]);
    expect(section(summary, "## Next Steps")).toBe("1. Wait for the user's next request: the last one was answered.");
  });
});

describe("updating a summary restored from what it replaced", () => {
  /** Another agent's summary, with the lines core's `restoreSummary` adds under its Critical Context. */
  const RESTORED = [
    "## Goal",
    "Refactor the uploader.",
    "",
    "## Critical Context",
    "- User request: Now make the retry count configurable through the settings file.",
    "- User constraint: Never touch migrations/ in this task.",
    "- File modified: `src/upload.ts`",
    "- Earlier user request: Add a retry to the uploader in src/upload.ts.",
  ].join("\n");

  it("makes the restored request the current task, its rule a constraint, its earlier request a request", () => {
    const summary = summarize([user("ok"), assistant("Reading the settings loader.")], RESTORED);
    expect(section(summary, "## Goal")).toBe(
      "Current task: Now make the retry count configurable through the settings file.\nBackground, the first request: Refactor the uploader.",
    );
    expect(section(summary, "## Constraints & Preferences")).toBe("- Never touch migrations/ in this task.");
    expect(summary).toContain("Request: Add a retry to the uploader in src/upload.ts.");
    expect(section(summary, "## Critical Context")).not.toMatch(/User request|User constraint/);
  });

  it("keeps a newer request of the part as the current task", () => {
    const summary = summarize([user("Next, write the changelog entry for the retry settings please."), assistant("Writing it.")], RESTORED);
    expect(section(summary, "## Goal").split("\n")[0]).toBe("Current task: Next, write the changelog entry for the retry settings please.");
    expect(summary).toContain("Now make the retry count configurable through the settings file.");
  });
});
