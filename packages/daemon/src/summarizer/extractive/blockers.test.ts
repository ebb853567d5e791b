/**
 * What a successor must do about what failed, and what the user asked (docs/retention.md "Fixed or
 * standing", docs/summaries.md "Updating a summary"): a command that needs the user's password is
 * theirs to run; a failure of a task the user stopped stays listed but is not the next step; a
 * change done another way is done; short replies keep the task going on. Small invented cases.
 */
import type { ContextMessage } from "@base-context/protocol";
import { INJECTED_TEXT_TYPE } from "@base-context/core";
import { describe, expect, it } from "vitest";
import { assistant, section, tool, user } from "./fixtures.js";
import { extractiveSummary } from "./index.js";

function summarize(messages: ContextMessage[], previousSummary?: string): string {
  return extractiveSummary({ kind: "history", messages, maxTokens: 13_107, ...(previousSummary !== undefined ? { previousSummary } : {}) });
}

const injected = (text: string): ContextMessage => ({ role: "custom", customType: INJECTED_TEXT_TYPE, content: text, display: false });
const NO_TERMINAL = "sudo: a terminal is required to read the password; either use the -S option or configure an askpass helper";

describe("Blocked and Next Steps", () => {
  it("a command that needs the user's password: the next step is to ask the user to run it", () => {
    const summary = summarize([
      user("Show the battery's charge thresholds in the status bar"),
      ...tool("Bash", { command: "sudo tlp-stat -b" }, `Exit code 1\n${NO_TERMINAL}`, { isError: true }),
      assistant("Reading the thresholds needs root, and I cannot type your password."),
    ]);
    expect(section(summary, "### Blocked")).toBe(`- \`sudo tlp-stat -b\` (exit 1): \`${NO_TERMINAL}\``);
    expect(section(summary, "## Next Steps")).toBe(
      "1. Ask the user to run `sudo tlp-stat -b` in their own terminal: it needs their password, which the agent cannot type.",
    );
  });

  it("the same command run again without sudo, and working, resolves it", () => {
    const summary = summarize([
      user("Show the battery's charge thresholds in the status bar"),
      ...tool("Bash", { command: "sudo tlp-stat -b" }, `Exit code 1\n${NO_TERMINAL}`, { isError: true }),
      ...tool("Bash", { command: "/usr/sbin/tlp-stat -b" }, "START_CHARGE_THRESH_BAT0=75\nSTOP_CHARGE_THRESH_BAT0=80"),
      assistant("The thresholds are 75 % and 80 %."),
    ]);
    expect(section(summary, "### Blocked")).toBe("- (none)");
    expect(section(summary, "## Next Steps")).not.toContain("tlp-stat");
  });

  it("a failure of a task the user stopped stays under Blocked, marked, and is not the next step", () => {
    const summary = summarize([
      user("Find out which process holds port 8080 and stop it"),
      ...tool("Bash", { command: "fuser 8080/tcp" }, "Exit code 1\nfuser: permission denied on /proc/net/tcp", { isError: true }),
      injected("[Request interrupted by user]"),
      user("Never mind that. Add a --port flag to the server so it can start elsewhere"),
      ...tool("Edit", { file_path: "src/server.ts", old_string: "8080", new_string: "port" }, "The file src/server.ts has been updated."),
      assistant("Added --port; the server starts on the port it is given."),
    ]);
    expect(section(summary, "### Blocked")).toBe(
      "- `fuser 8080/tcp` (exit 1) (task stopped by the user): `fuser: permission denied on /proc/net/tcp`",
    );
    expect(section(summary, "## Next Steps")).not.toContain("fuser");
    // "Never mind" takes something back: it is no rule.
    expect(section(summary, "## Constraints & Preferences")).toBe("- (none)");
  });

  it("a failure met before the current task was asked is not what the next step fixes", () => {
    const summary = summarize([
      user("Upload the nightly build to the staging bucket"),
      ...tool("Bash", { command: "rclone copy dist staging:nightly" }, "Exit code 1\nFailed to copy: AccessDenied: bucket policy", { isError: true }),
      user("Now bump the version in package.json to 2.4.0, the upload can wait"),
      ...tool("Edit", { file_path: "package.json", old_string: "2.3.9", new_string: "2.4.0" }, "The file package.json has been updated."),
      assistant("The version is 2.4.0 now."),
    ]);
    expect(section(summary, "### Blocked")).toContain("rclone copy dist staging:nightly");
    expect(section(summary, "## Next Steps")).not.toContain("Fix the failure");
  });

  it("a refused write whose content was then written elsewhere is done, and Done says how", () => {
    const plan = "# Release plan\n\n1. Freeze the branch on Monday.\n2. Tag the release candidate and send it to the testers on Wednesday.\n";
    const summary = summarize([
      user("Write the release plan we discussed to a file"),
      ...tool("Write", { file_path: "/etc/release/plan.md", content: plan }, "EACCES: permission denied, open '/etc/release/plan.md'", { isError: true }),
      ...tool("Write", { file_path: "notes/plan.md", content: plan }, "File created successfully at: notes/plan.md"),
      assistant("The plan is in notes/plan.md."),
    ]);
    expect(section(summary, "### Blocked")).toBe("- (none)");
    expect(section(summary, "### Done")).toContain("then the same content was written elsewhere");
  });
});

describe("the Goal when the part only answers the agent", () => {
  const previous = summarize([
    user("Add CSV export to the reports page and make it the default format"),
    ...tool("Edit", { file_path: "src/reports.tsx", old_string: "pdf", new_string: "csv" }, "The file src/reports.tsx has been updated."),
    assistant("Shall I run the tests, or will you?"),
  ]);

  it("a short reply keeps the earlier summary's task, the reply quoted after it", () => {
    const summary = summarize([user("you do it"), ...tool("Bash", { command: "npm test" }, "12 passed"), assistant("All 12 pass.")], previous);
    expect(section(summary, "## Goal")).toBe('Current task: Add CSV export to the reports page and make it the default format Then: "you do it".');
  });

  it("a short imperative naming work of its own is the new task", () => {
    const summary = summarize([user("Try Tailwind instead"), assistant("Switching to Tailwind.")], previous);
    expect(section(summary, "## Goal")).toBe(
      "Current task: Try Tailwind instead\nBackground, the first request: Add CSV export to the reports page and make it the default format",
    );
  });

  it("an earlier summary's split-turn line that only says to go on is a reply to its task, not a task", () => {
    const split = "## Goal\nCurrent task: Migrate every table to the new schema\nkeep going till the end\n\n## Next Steps\n1. Continue.";
    const summary = summarize([...tool("Bash", { command: "npm run migrate -- --table users" }, "migrated users"), assistant("Users done.")], split);
    expect(section(summary, "## Goal")).toBe('Current task: Migrate every table to the new schema Then: "keep going till the end".');
  });
});
