import type { AgentMessage, SessionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { lostByCompaction, newClaudeCodeCompaction, preCompactInstructions, retentionReportLine, standingItems } from "./claude-code-hook.js";

const at = "2026-11-01T00:00:00.000Z";
let n = 0;
function message(message: AgentMessage): SessionEntry {
  n++;
  return { type: "message", id: `e${n}`, parentId: n > 1 ? `e${n - 1}` : null, timestamp: at, message };
}
const user = (text: string) => message({ role: "user", content: text, timestamp: 1 });
const call = (id: string, name: string, args: Record<string, unknown>) =>
  message({
    role: "assistant",
    content: [{ type: "toolCall", id, name, arguments: args }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "m",
    stopReason: "toolUse",
    timestamp: 1,
    usage: {
      input: 1,
      output: 1,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 2,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
  });
const result = (id: string, name: string, text: string, isError = false) =>
  message({ role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text }], isError, timestamp: 1 });

/** A turn: the user's rule, an edit, a failing listing, a failing test fixed later. */
function session(): SessionEntry[] {
  n = 0;
  return [
    user("Fix the typo in /srv/app/notes.txt. Never touch the tests folder."),
    call("c1", "Edit", { file_path: "/srv/app/notes.txt", old_string: "teh", new_string: "the" }),
    result("c1", "Edit", "The file /srv/app/notes.txt has been updated."),
    call("c2", "Bash", { command: "npm run build" }),
    result("c2", "Bash", "Error: Cannot find module './routes'", true),
    call("c3", "Bash", { command: "npm test" }),
    result("c3", "Bash", "Error: expected 2, received 1", true),
    call("c4", "Bash", { command: "npm test" }),
    result("c4", "Bash", "Tests: 12 passed"),
  ];
}

function compacted(summary: string): SessionEntry[] {
  const before = session();
  const last = before[before.length - 1]!.id;
  const marker: SessionEntry = {
    type: "custom",
    id: "b1",
    parentId: last,
    timestamp: at,
    customType: "claude-code.compact_boundary",
    data: {},
  };
  const compaction: SessionEntry = {
    type: "compaction",
    id: "s1",
    parentId: "b1",
    timestamp: at,
    summary,
    firstKeptEntryId: "b1",
    tokensBefore: null,
    details: { source: "claude-code" },
  };
  return [...before, marker, compaction];
}

describe("the Claude Code hook's answers", () => {
  it("PreCompact: the constraint, the error still standing and the file modified, not the error fixed later", () => {
    expect(preCompactInstructions(session()).split("\n")).toEqual([
      expect.stringMatching(/^Base Context read this session's transcript\./),
      "- User constraint: Never touch the tests folder.",
      "- Error (npm run build): `Error: Cannot find module './routes'`",
      "- File modified: `/srv/app/notes.txt`",
    ]);
    expect(preCompactInstructions([user("Hello there.")])).toBe("");
  });

  it("SessionStart: the items of the context replaced while the summary cannot be read, else only what the summary lost", () => {
    expect(standingItems(session())).toContain("- User constraint: Never touch the tests folder.");
    const path = compacted("Fixed the typo in /srv/app/notes.txt. Never touch the tests folder.");
    const compaction = newClaudeCodeCompaction(path);
    expect(compaction?.id).toBe("s1");
    const lost = lostByCompaction(compaction!.summary, path.slice(0, -2));
    expect(lost?.split("\n").slice(1)).toEqual(["- Error (npm run build): `Error: Cannot find module './routes'`"]);
    const kept = "Fixed /srv/app/notes.txt. Never touch the tests folder. The build fails: Error: Cannot find module './routes'.";
    expect(lostByCompaction(kept, path.slice(0, -2))).toBeUndefined();
    // Once the model answered after it, or for a compaction that is not Claude Code's, there is nothing to say.
    expect(newClaudeCodeCompaction([...path, call("c9", "Bash", { command: "ls" })])).toBeUndefined();
    expect(newClaudeCodeCompaction(path.map((entry) => (entry.type === "compaction" ? { ...entry, details: {} } : entry)))).toBeUndefined();
  });

  it("PostCompact: the retention line, with what was lost", () => {
    const line = retentionReportLine("Fixed the typo in /srv/app/notes.txt. Never touch the tests folder.", session());
    expect(line).toMatch(/^Base Context: Claude Code's summary kept 1\/1 files, 0\/2 errors, 1\/1 constraints/);
    expect(line).toContain(`; lost: error "Error: Cannot find module './routes'"`);
  });
});
