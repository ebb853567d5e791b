/**
 * Entries refused on import (larger than limits.maxEntryBytes, nested too deeply, invalid) must
 * not detach the history before them: their children hang under the nearest kept ancestor, and
 * the refused line's reason says so.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionStore } from "../store/index.js";
import { FakeCounter, sequentialIds } from "./fixtures/test-helpers.js";
import { SessionService } from "./service.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const header = '{"type":"session","version":3,"id":"skips","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}';
const message = (id: string, parentId: string | null, content: unknown = id) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: "2026-03-01T12:00:01.000Z", message: { role: "user", content } });

function deeplyNested(levels: number): string {
  return "[".repeat(levels) + "]".repeat(levels);
}

describe("import of refused entries keeps the history before them", () => {
  let folder: string;
  let store: SessionStore;
  let sessions: SessionService;

  beforeEach(() => {
    folder = dirs.make();
    const ids = sequentialIds();
    store = new SessionStore({ path: join(folder, "skips.db"), ids, checkpoints: "sqlite" });
    sessions = new SessionService(store, new FakeCounter(), { ids, import: { batchSize: 2, maxEntryBytes: () => 4096 } });
  });
  afterEach(async () => {
    await store.close();
    dirs.remove(folder);
  });

  const importContent = (lines: string[]) => sessions.import({ format: "pi-jsonl", content: lines.join("\n") + "\n" }, {});
  const pathIds = async (id: string) => (await sessions.getCountedPath(id)).map((counted) => counted.entry.id);

  it("attaches the children of an entry larger than maxEntryBytes (and of chains of them) to the nearest kept ancestor", async () => {
    const big = "x".repeat(8000);
    const result = await importContent([
      header,
      message("a", null),
      message("b", "a"),
      message("big1", "b", big),
      message("big2", "big1", big),
      message("c", "big2"),
      message("d", "c"),
    ]);
    expect(await pathIds(result.session.id)).toEqual(["a", "b", "c", "d"]);
    expect(result.skippedLines?.map((skip) => skip.line)).toEqual([4, 5]);
    expect(result.skippedLines?.[1]?.reason).toMatch(/limits\.maxEntryBytes.*its children were attached to "b"/);
  });

  it("a compaction whose first kept entry was refused keeps its tail from that entry's nearest kept ancestor", async () => {
    const compaction = JSON.stringify({
      type: "compaction",
      id: "k",
      parentId: "c",
      timestamp: "2026-03-01T12:00:02.000Z",
      summary: "earlier work",
      firstKeptEntryId: "big",
      tokensBefore: 100,
    });
    const result = await importContent([
      header,
      message("a", null),
      message("b", "a"),
      message("big", "b", "x".repeat(8000)),
      message("c", "big"),
      compaction,
      message("d", "k"),
    ]);
    const context = await sessions.getContextPath(result.session.id);
    const ids = context.entries.map((counted) => counted.entry.id);
    expect(ids).toEqual(expect.arrayContaining(["b", "c", "k", "d"]));
    expect(ids).not.toContain("a");
    expect(result.skippedLines?.[0]?.reason).toMatch(/a compaction's kept entries now start at "b"/);
  });

  it("refuses a line nested deeper than a request may nest, with a reason, and re-parents its children", async () => {
    const deep = JSON.stringify({
      type: "message",
      id: "deep",
      parentId: "a",
      timestamp: "2026-03-01T12:00:01.000Z",
      message: { role: "user", content: "x" },
    }).replace('"content":"x"', `"content":"x","extra":${deeplyNested(200_000)}`);
    const result = await importContent([header, message("a", null), deep, message("c", "deep")]);
    expect(await pathIds(result.session.id)).toEqual(["a", "c"]);
    expect(result.skippedLines).toEqual([
      { line: 3, reason: expect.stringMatching(/nested deeper than 128 levels.*its children were attached to "a"/) },
    ]);
    // The session stays readable: every entry can be serialized.
    expect(() => JSON.stringify(store.path(result.session.id))).not.toThrow();
  });

  it("re-parents the children of a well-formed but invalid entry; a root's children become roots", async () => {
    const invalid = JSON.stringify({
      type: "message",
      id: "bad",
      parentId: "a",
      timestamp: "2026-03-01T12:00:01.000Z",
      message: { role: "nobody" },
    });
    const result = await importContent([header, message("a", null), invalid, message("c", "bad")]);
    expect(await pathIds(result.session.id)).toEqual(["a", "c"]);
    expect(result.skippedLines?.[0]?.reason).toMatch(/its children were attached to "a"/);

    const rootSkipped = await sessions.import(
      {
        format: "pi-jsonl",
        content: [header.replace('"skips"', '"skips2"'), message("r", null, "y".repeat(8000)), message("c", "r")].join("\n"),
      },
      {},
    );
    expect(await pathIds(rootSkipped.session.id)).toEqual(["c"]);
    expect(rootSkipped.skippedLines?.[0]?.reason).toMatch(/its children became roots/);
  });

  it("does not redirect the children of a kept entry when a refused line repeats its id", async () => {
    const result = await importContent([
      header,
      message("a", null),
      message("b", "a"),
      message("b", "a", "z".repeat(8000)),
      message("c", "b"),
    ]);
    expect(await pathIds(result.session.id)).toEqual(["a", "b", "c"]);
  });
});
