/**
 * Claude Code's attachment lines (written the way Claude Code 2.1 writes them: the turn's user
 * line, then its attachments, each chained to the line before): those that reach the model are
 * context messages, in the order the model reads them (a run of attachments before the user lines
 * it follows, after the latest reply or tool result); bookkeeping stays data; an import that goes
 * on from the middle of a turn gives the same entries; Base Context's own SessionStart context,
 * given back after a compaction, is carried by the next compaction's probes. And the messages the
 * user typed while the agent worked (queue-operation lines) that no conversation line holds.
 */
import type { SessionEntry } from "@base-context/protocol";
import { buildContext } from "@base-context/core";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDirs } from "../../../../../../test/support/temp-dir.js";
import { SessionStore } from "../../../store/index.js";
import { FakeCounter, sequentialIds } from "../../fixtures/test-helpers.js";
import { probesWithHandedBack } from "../../handed-back.js";
import { ImportStates } from "../../import-state.js";
import { SessionService } from "../../service.js";

const dirs = tempDirs();
const SESSION = "a77ac0de-0000-4000-8000-000000000000";
const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** One line of a transcript: `n` its uuid, `parent` the line before it. */
function line(n: number, parent: number | null, fields: Record<string, unknown>): string {
  return JSON.stringify({
    parentUuid: parent === null ? null : u(parent),
    isSidechain: false,
    userType: "external",
    cwd: "/srv/app",
    sessionId: SESSION,
    version: "2.1.332",
    uuid: u(n),
    timestamp: `2026-12-01T10:00:${String(n).padStart(2, "0")}.000Z`,
    ...fields,
  });
}
const user = (n: number, parent: number | null, content: unknown) => line(n, parent, { type: "user", message: { role: "user", content } });
const assistant = (n: number, parent: number, content: unknown[]) =>
  line(n, parent, { type: "assistant", message: { role: "assistant", model: "claude-sonnet-4-5", content } });
const attachment = (n: number, parent: number, value: Record<string, unknown>) => line(n, parent, { type: "attachment", attachment: value });

const HANDED_BACK =
  "Before this compaction, the conversation held these; Base Context read them from the transcript. They still hold:\n" +
  "- User constraint: Never touch the tests folder.\n" +
  "- Error (ls /srv/old): `ls: cannot access '/srv/old': No such file or directory`";

/** A turn, a compaction, then the turn after it with its attachments (the SessionStart hook's context among them). */
const TRANSCRIPT = [
  user(1, null, "Please list the old folder."),
  attachment(2, 1, { type: "date", date: "2026-12-01" }),
  attachment(3, 2, { type: "prompt_snapshot", systemPrompt: ["(the system prompt)"] }),
  assistant(4, 3, [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls /srv/old" } }]),
  user(5, 4, [{ type: "tool_result", tool_use_id: "toolu_1", is_error: true, content: "ls: cannot access '/srv/old': No such file or directory" }]),
  attachment(6, 5, { type: "total_tokens_reminder", text: "<total_tokens>900 tokens left</total_tokens>" }),
  assistant(7, 6, [{ type: "text", text: "The folder is gone." }]),
  line(8, null, {
    type: "system",
    subtype: "compact_boundary",
    logicalParentUuid: u(7),
    content: "Conversation compacted",
    compactMetadata: { trigger: "manual", preTokens: 900 },
  }),
  line(9, 8, { type: "user", isCompactSummary: true, message: { role: "user", content: "Summary: the user asked to list a folder." } }),
  user(10, 9, "<command-name>/compact</command-name>"),
  attachment(11, 10, { type: "file", filename: "/srv/app/notes.txt", displayPath: "notes.txt", content: { type: "text", file: { content: "milk" } } }),
  attachment(12, 11, { type: "hook_success", hookName: "SessionStart:compact", stdout: "{}" }),
  attachment(13, 12, { type: "hook_additional_context", hookEvent: "SessionStart", content: [HANDED_BACK] }),
  user(14, 13, "What is left?"),
  attachment(15, 14, { type: "date", date: "2026-12-02" }),
  assistant(16, 15, [{ type: "text", text: "Nothing." }]),
];

describe("Claude Code's attachments", () => {
  let folder: string;
  let stores: SessionStore[];
  beforeEach(() => {
    folder = dirs.make();
    stores = [];
  });
  afterEach(async () => {
    for (const store of stores) await store.close();
    dirs.remove(folder);
  });
  const service = (name: string, states?: ImportStates) => {
    const ids = sequentialIds();
    const store = new SessionStore({ path: join(folder, `${name}.db`), ids, checkpoints: "sqlite" });
    stores.push(store);
    return {
      store,
      sessions: new SessionService(store, new FakeCounter(), { ids, import: { batchSize: 4, ...(states ? { states } : {}) } }),
    };
  };
  const transcript = (lines: readonly string[]) => {
    const path = join(folder, `${SESSION}.jsonl`);
    writeFileSync(path, `${lines.join("\n")}\n`);
    return path;
  };
  /** Each context message as "role: first words" ("custom: Date: 2026-12-01"). */
  const contextOf = (store: SessionStore) => {
    const path = store.path(SESSION).map((stored) => stored.entry);
    return buildContext({ path: path.map((entry) => ({ entry, tokens: 0 })) }).messages.map((message) => {
      const content: unknown = message.role === "compactionSummary" ? message.summary : "content" in message ? message.content : "";
      const blocks = Array.isArray(content) ? (content as { type: string; text?: string }[]) : [];
      const text = typeof content === "string" ? content : blocks.map((block) => block.text ?? `[${block.type}]`).join(" ");
      return `${message.role}: ${text.split("\n")[0]!.slice(0, 40)}`;
    });
  };

  it("puts those that reach the model in the context, in the order the model reads them; bookkeeping stays data", async () => {
    const { store, sessions } = service("main");
    await sessions.import({ path: transcript(TRANSCRIPT) });
    expect(contextOf(store)).toEqual([
      expect.stringMatching(/^compactionSummary: /),
      // After the summary: the run of attachments first, then the user lines they came after.
      "custom: File notes.txt:",
      "custom: SessionStart hook additional context:",
      "custom: Date: 2026-12-02",
      "custom: <command-name>/compact</command-name>",
      "user: What is left?",
      "assistant: Nothing.",
    ]);
    const entries = new Map([...store.entriesInOrder(SESSION)].flat().map((stored) => [stored.entry.id, stored.entry]));
    expect(entries.get(u(3))).toMatchObject({ type: "custom", customType: "claude-code.attachment", data: { attachment: { type: "prompt_snapshot" } } });
    expect(entries.get(u(12))).toMatchObject({ type: "custom", customType: "claude-code.attachment" });
    expect(entries.get(u(13))).toMatchObject({
      type: "custom_message",
      customType: "injected-text",
      details: { source: "claude-code", kind: "attachment", attachment: "hook_additional_context" },
    });
    // Before the compaction, the first turn as the model read it: the date before the request, the reminder after the result.
    const before = store.path(SESSION, u(7)).map((stored) => stored.entry.id);
    expect(before).toEqual([u(2), u(3), u(1), u(4), u(5), u(6), u(7)]);
  });

  it("gives the same entries when imported in pieces cut between turns, or between a boundary and its summary", async () => {
    const { store: whole, sessions: once } = service("whole");
    await once.import({ path: transcript(TRANSCRIPT) });
    const expected = [...whole.entriesInOrder(SESSION)].flat().map(({ entry }): SessionEntry => entry);
    for (const cut of [4, 5, 6, 7, 8, 9]) {
      const { store, sessions } = service(`cut-${cut}`, new ImportStates(join(folder, `states-${cut}`)));
      await sessions.import({ path: transcript(TRANSCRIPT.slice(0, cut)) });
      await sessions.import({ path: transcript(TRANSCRIPT) });
      const pieces = [...store.entriesInOrder(SESSION)].flat().map(({ entry }): SessionEntry => entry);
      expect(new Map(pieces.map((entry) => [entry.id, entry])), `cut after line ${cut}`).toEqual(new Map(expected.map((entry) => [entry.id, entry])));
    }
  });

  it("keeps every attachment on the path when an import stops between a user line and its attachments (they then follow it)", async () => {
    const { store, sessions } = service("cut", new ImportStates(join(folder, "states")));
    await sessions.import({ path: transcript(TRANSCRIPT.slice(0, 12)) });
    await sessions.import({ path: transcript(TRANSCRIPT) });
    const context = contextOf(store);
    expect(context.slice(1, 5)).toEqual(["custom: File notes.txt:", "custom: <command-name>/compact</command-name>", "custom: SessionStart hook additional context:", "custom: Date: 2026-12-02"]);
    expect(context.slice(-2)).toEqual(["user: What is left?", "assistant: Nothing."]);
  });

  it("carries what the SessionStart hook gave back into the next compaction's probes", async () => {
    const { store, sessions } = service("main");
    await sessions.import({ path: transcript(TRANSCRIPT) });
    const probes = probesWithHandedBack(store.path(SESSION).map((stored) => stored.entry));
    expect(probes.constraints.map((item) => item.text)).toContain("Never touch the tests folder.");
    expect(probes.errors.map((item) => item.text)).toContain("ls: cannot access '/srv/old': No such file or directory");
  });

  it("gives the conversation a message the user typed while the agent worked, where Claude Code handed it over", async () => {
    const queue = (operation: string, content?: string) =>
      JSON.stringify({ type: "queue-operation", operation, timestamp: "2026-12-01T10:00:30.000Z", sessionId: SESSION, ...(content ? { content } : {}) });
    const lines = [
      queue("enqueue", "Fix the parser."),
      queue("dequeue"),
      user(1, null, "Fix the parser."),
      assistant(2, 1, [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "npm test" } }]),
      queue("enqueue", "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"),
      queue("enqueue", "check the lexer too"),
      user(3, 2, [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }]),
      queue("remove"),
      assistant(4, 3, [{ type: "text", text: "Tests pass; looking at the lexer." }]),
    ];
    const { store, sessions } = service("queued", new ImportStates(join(folder, "states")));
    const result = await sessions.import({ path: transcript(lines) });
    expect(result.ignoredLines).toEqual({ "queue-operation": 4 });
    const path = store.path(SESSION).map((stored) => stored.entry);
    // Given once (a dequeued message is the user line after it), then the one typed during the turn, on the path.
    expect(path.map((entry) => (entry.type === "message" && entry.message.role === "user" ? entry.message.content : entry.id))).toEqual([
      "Fix the parser.",
      u(2),
      u(3),
      "check the lexer too",
      u(4),
    ]);
    expect(path[3]!.id).toBe(`${SESSION}.queued-1`);
  });
});
