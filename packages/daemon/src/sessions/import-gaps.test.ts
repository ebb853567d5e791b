/**
 * An unreadable line never cuts the history: the entry after it, whose parent is the line that
 * could not be read, hangs under the last entry read before it, for pi files, Claude Code
 * transcripts and Codex rollouts; and the real transcript of the corpus with such a line
 * (../shared/corpus beside the clone; that part is skipped when the folder is absent).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { SessionStore } from "../store/index.js";
import { sessionServices } from "./fixtures/test-helpers.js";
import type { SessionService } from "./service.js";

const CORPUS = join(import.meta.dirname, "..", "..", "..", "..", "..", "shared", "corpus");
const HARDENING = join(CORPUS, "cc-chatlog-repo-hardening.jsonl");

const header = (id = "gaps") => JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-03-01T12:00:00.000Z", cwd: "/p" });
const message = (id: string, parentId: string | null, role: "user" | "assistant" = "user") =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-03-01T12:00:01.000Z",
    message: role === "user" ? { role, content: id } : { role, content: [{ type: "text", text: id }] },
  });
/** A line cut short by a crash mid-write: its id is there, but it is not JSON. */
const cut = (line: string) => line.slice(0, Math.floor(line.length / 2));

const SESSION = "5e551011-0000-4000-8000-000000000000";
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const ccLine = (n: number, parent: number | null, type: "user" | "assistant", content: unknown) =>
  JSON.stringify({
    parentUuid: parent === null ? null : uuid(parent),
    isSidechain: false,
    userType: "external",
    cwd: "/home/dev/app",
    sessionId: SESSION,
    version: "2.1.50",
    type,
    message: type === "user" ? { role: "user", content } : { role: "assistant", model: "claude-sonnet-4-5", content },
    uuid: uuid(n),
    timestamp: `2026-03-01T10:00:${String(n).padStart(2, "0")}.000Z`,
  });

const services = sessionServices();

describe("an unreadable line never cuts the history", () => {
  let store: SessionStore;
  let sessions: SessionService;
  beforeEach(() => ({ store, sessions } = services.open("gaps", { batchSize: 2 })));

  const pathIds = async (id: string) => (await sessions.getCountedPath(id)).map((counted) => counted.entry.id);
  const roots = (id: string) => [...store.entriesInOrder(id)].flat().filter((stored) => stored.entry.parentId === null);

  it("pi: the child of a line that is not JSON hangs under the last entry before it, and the reply and the reason say so", async () => {
    const result = await sessions.import({
      format: "pi-jsonl",
      content: [header(), message("a", null), message("b", "a", "assistant"), cut(message("c", "b")), message("d", "c"), message("e", "d")].join("\n"),
    });
    expect(await pathIds(result.session.id)).toEqual(["a", "b", "d", "e"]);
    expect(roots(result.session.id)).toHaveLength(1);
    expect(result.skippedLines).toEqual([
      { line: 4, reason: expect.stringMatching(/^invalid JSON.*; bridged: its child \(line 5\) was attached to "b", the last entry read before it$/), bridgedTo: "b" },
    ]);
  });

  it("pi: lines in a row that cannot be read, and several children of one, all hang under the entry before them", async () => {
    const result = await sessions.import({
      format: "pi-jsonl",
      content: [
        header(),
        message("a", null),
        message("b", "a", "assistant"),
        "{not json",
        cut(message("c", "b")),
        message("d", "c", "assistant"),
        message("d2", "c", "assistant"),
        message("e", "d"),
      ].join("\n"),
    });
    expect(await pathIds(result.session.id)).toEqual(["a", "b", "d", "e"]);
    const tree = [...store.entriesInOrder(result.session.id)].flat().map((stored) => [stored.entry.id, stored.entry.parentId]);
    expect(tree).toEqual([["a", null], ["b", "a"], ["d", "b"], ["d2", "b"], ["e", "d"]]);
    // Line 5 still shows its id ("c"): its children are bridged; the history goes on over line 4 too.
    expect(result.skippedLines?.map((skip) => [skip.line, skip.bridgedTo])).toEqual([[4, "b"], [5, "b"]]);
    expect(result.skippedLines?.[1]?.reason).toMatch(/its child \(line 6\) was attached to "b"/);
  });

  it("pi: an unreadable line before any entry leaves its child a root, and says why", async () => {
    const result = await sessions.import({ format: "pi-jsonl", content: [header(), cut(message("a", null)), message("b", "a")].join("\n") });
    expect(await pathIds(result.session.id)).toEqual(["b"]);
    expect(result.skippedLines?.[0]).toEqual({ line: 2, reason: expect.stringMatching(/its child \(line 3\) became a root: no entry was read before it$/) });
  });

  it("pi: a parent no line holds is not taken for the unreadable line, whose text still shows its own id", async () => {
    const result = await sessions.import({
      format: "pi-jsonl",
      content: [header(), message("a", null), message("b", "a"), cut(message("c", "b")), message("x", "nowhere"), message("d", "c")].join("\n"),
    });
    const parents = Object.fromEntries(
      [...store.entriesInOrder(result.session.id)].flat().map((stored) => [stored.entry.id, stored.entry.parentId]),
    );
    // "x" names an entry that is in no line: a root, as pi shows it; "d" names the cut line "c".
    expect(parents).toEqual({ a: null, b: "a", x: null, d: "b" });
    expect(result.skippedLines).toEqual([{ line: 4, reason: expect.stringMatching(/its child \(line 6\) was attached to "b"/), bridgedTo: "b" }]);
  });

  it("pi: a line that is JSON but not an entry is no gap; the next entry naming a missing parent stays a root", async () => {
    const result = await sessions.import({ format: "pi-jsonl", content: [header(), message("a", null), "42", message("x", "nowhere")].join("\n") });
    expect(result.skippedLines).toEqual([{ line: 3, reason: "not a JSON object" }]);
    expect(roots(result.session.id).map((stored) => stored.entry.id)).toEqual(["a", "x"]);
  });

  it("Claude Code: a tool result line that is not JSON; its child is bridged, also on a re-import of the grown file", async () => {
    const lines = [
      ccLine(1, null, "user", "List the files"),
      ccLine(2, 1, "assistant", [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }]),
      // The result line, with an escape JSON does not know (as a redaction tool writes): unreadable.
      ccLine(3, 2, "user", [{ type: "tool_result", tool_use_id: "toolu_1", content: "a.txt" }]).replace("a.txt", "a\\[x].txt"),
      ccLine(4, 3, "assistant", [{ type: "text", text: "One file." }]),
      ccLine(5, 4, "user", "Thanks"),
    ];
    const path = join(services.folder, `${SESSION}.jsonl`);
    const { writeFileSync, appendFileSync } = await import("node:fs");
    writeFileSync(path, `${lines.join("\n")}\n`);
    const first = await sessions.import({ path, format: "claude-code-jsonl" });
    expect(await pathIds(SESSION)).toEqual([uuid(1), uuid(2), uuid(4), uuid(5)]);
    expect(first.skippedLines).toEqual([{ line: 3, reason: expect.stringMatching(/^invalid JSON.*bridged.*line 4.*"00000000-0000-4000-8000-000000000002"/), bridgedTo: uuid(2) }]);

    appendFileSync(path, `${ccLine(6, 5, "assistant", [{ type: "text", text: "You're welcome." }])}\n`);
    const again = await sessions.import({ path, format: "claude-code-jsonl" });
    expect(again).toMatchObject({ updated: true, addedEntries: 1 });
    expect(await pathIds(SESSION)).toEqual([uuid(1), uuid(2), uuid(4), uuid(5), uuid(6)]);
  });

  it("Codex: the entry after a line that is not JSON follows the one before it, and the reply says the history goes on", async () => {
    const line = (type: string, payload: object) => JSON.stringify({ timestamp: "2026-05-02T10:00:00.000Z", type, payload });
    const result = await sessions.import({
      format: "codex-jsonl",
      content: [
        line("session_meta", { id: "c0dex-gap", cwd: "/p", timestamp: "2026-05-02T10:00:00.000Z" }),
        line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: "Fix it" }] }),
        '{"timestamp":"2026-05-02T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"assis',
        line("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done" }] }),
      ].join("\n"),
    });
    expect(await pathIds(result.session.id)).toEqual(["cx2", "cx4"]);
    expect(result.skippedLines).toEqual([{ line: 3, reason: expect.stringMatching(/bridged: the next entry \(line 4\) follows "cx2"/), bridgedTo: "cx2" }]);
  });
});

describe.skipIf(!existsSync(HARDENING))("the corpus's transcript with a line that is not JSON (skipped when ../shared/corpus is absent)", () => {
  it("imports with its whole history on one path: the human's first message is on the context's path", async () => {
    const { store, sessions } = services.open("corpus");
    const result = await sessions.import({ path: HARDENING });
    expect(result.skippedLines).toEqual([{ line: 745, reason: expect.stringMatching(/^invalid JSON.*bridged/), bridgedTo: expect.any(String) }]);
    const all = [...store.entriesInOrder(result.session.id)].flat();
    // One root: the conversation's first line. Everything read is reachable from it.
    expect(all.filter((stored) => stored.entry.parentId === null).map((stored) => stored.entry.id)).toEqual([all[0]!.entry.id]);
    const path = (await sessions.getCountedPath(result.session.id)).map((counted) => counted.entry);
    expect(path[0]!.id).toBe(all[0]!.entry.id);
    const typed = path.flatMap((entry) => (entry.type === "message" && entry.message.role === "user" ? [entry.message.content] : []));
    expect(String(typed[0])).toMatch(/^I want a complete history of our chats/);
    // Lines on both sides of the gap are on the path.
    const onPath = new Set(path.map((entry) => entry.id));
    expect(onPath.has(result.skippedLines?.[0]?.bridgedTo ?? "")).toBe(true);
    expect(path.length).toBeGreaterThan(all.length * 0.9);
  });
});
