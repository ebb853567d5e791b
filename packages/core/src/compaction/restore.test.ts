import type { CompactionPreparation, CompactionSettings } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { carriedProbes } from "../retention/repair.js";
import { PathBuilder, toolCall } from "../test-support.js";
import { prepareCompaction } from "./prepare.js";
import { isCheckedCompaction, restoredSummary } from "./restore.js";

const settings: CompactionSettings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 100 };

/** What another agent's summary of `history` (below) says: the gist, none of the items. */
const FOREIGN_SUMMARY = "## Goal\nWork on the shop.\n\n## Progress\n- Looked around the code.";

/** A range another agent's compaction replaced: a request, a rule, a failing test, an edit. */
function history(s: PathBuilder): void {
  s.user("Add a retry to the uploader in src/upload.ts. Never touch migrations/ in this task.", 50);
  s.assistant({ toolCalls: [toolCall("c1", "edit", { path: "src/upload.ts", oldText: "a", newText: "b" })] }, 50);
  s.toolResult("c1", "edited", 50, "edit");
  s.bash({ command: "pnpm test", output: "AssertionError: expected 3 retries, got 1", exitCode: 1 }, 50);
  s.user("Now make the retry count configurable through the settings file.", 50);
  s.assistant({ text: "Looking into the settings loader." }, 50);
}

function prepared(s: PathBuilder): CompactionPreparation {
  const result = prepareCompaction(s.path, settings);
  if (!("preparation" in result)) throw new Error(result.nothing);
  return result.preparation;
}

/** The path: history, the compaction (`details`), then a kept tail long enough to be compacted again. */
function compactedPath(details: unknown): PathBuilder {
  const s = new PathBuilder();
  history(s);
  const firstKept = s.user("Thanks. Carry on.", 50);
  s.assistant({ text: "Carrying on." }, 50);
  s.compaction({ summary: FOREIGN_SUMMARY, firstKeptEntryId: firstKept, tokensBefore: 400, ...(details !== undefined ? { details } : {}) });
  s.user("What is left?", 200);
  s.assistant({ text: "The settings part." }, 200);
  s.user("Go on.", 200);
  s.assistant({ text: "On it." }, 200);
  return s;
}

describe("restoring another agent's summary", () => {
  it("gives the next preparation what the summary lost: the request, the rule, the standing error, the edited file", () => {
    const report = { files: { kept: 0, total: 0 } };
    // pi's (no details, or its file lists), Claude Code's and Codex's (a report from the import, nothing repaired).
    const imported = [undefined, { readFiles: [], modifiedFiles: [] }, { source: "claude-code", retention: report }, { source: "codex" }];
    for (const details of imported) {
      const previous = prepared(compactedPath(details)).previousSummary!;
      expect(previous.startsWith(FOREIGN_SUMMARY)).toBe(true);
      expect(previous).toContain("- User request: Now make the retry count configurable through the settings file.");
      expect(previous).toContain("- User constraint: Never touch migrations/ in this task.");
      expect(previous).toContain("- Error (pnpm test): `AssertionError: expected 3 retries, got 1`");
      expect(previous).toContain("- File modified: `src/upload.ts`");
      expect(previous).toContain("- Earlier user request: Add a retry to the uploader in src/upload.ts.");
      // What the update checks the new summary against reads them back.
      const carried = carriedProbes(previous);
      expect(carried.requests.map((r) => r.text)).toContain("Now make the retry count configurable through the settings file.");
      expect(carried.constraints.map((c) => c.text)).toContain("Never touch migrations/ in this task.");
    }
  });

  it("does not re-read a compaction this daemon checked when it wrote it", () => {
    const details = { retention: { files: { kept: 0, total: 0 } } };
    const s = compactedPath(details);
    expect(isCheckedCompaction(s.path[8]!.entry as never)).toBe(true);
    expect(prepared(s).previousSummary).toBe(FOREIGN_SUMMARY);
  });

  it("adds nothing the summary already holds, and reads nothing from a path that does not start at the root", () => {
    const s = compactedPath({ source: "codex" });
    const index = s.path.findIndex((item) => item.entry.type === "compaction");
    const suffix = s.path.slice(6);
    expect(restoredSummary(suffix, index - 6, 1024)).toBe(FOREIGN_SUMMARY);
    const once = restoredSummary(s.path, index, 1024);
    const entry = s.path[index]!.entry as { summary: string };
    entry.summary = once;
    expect(restoredSummary(s.path, index, 1024)).toBe(once);
  });

  it("restores a chain from the earliest: what the first summary lost reaches the second", () => {
    const s = new PathBuilder();
    history(s);
    const firstKept = s.user("Thanks. Carry on.", 50);
    s.compaction({ summary: FOREIGN_SUMMARY, firstKeptEntryId: firstKept, tokensBefore: 400 });
    s.assistant({ text: "Carrying on." }, 50);
    const secondKept = s.user("Keep going.", 50);
    s.compaction({ summary: "## Goal\nStill the shop.", firstKeptEntryId: secondKept, tokensBefore: 400 });
    s.assistant({ text: "Going." }, 200);
    s.user("Status?", 200);
    s.assistant({ text: "Nearly done." }, 200);
    const previous = prepared(s).previousSummary!;
    expect(previous.startsWith("## Goal\nStill the shop.")).toBe(true);
    expect(previous).toContain("- User constraint: Never touch migrations/ in this task.");
    expect(previous).toContain("- File modified: `src/upload.ts`");
    expect(previous).toContain("Now make the retry count configurable through the settings file.");
  });
});
