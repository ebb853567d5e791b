/**
 * Imports that go on from where the last import of the file stopped (import-state.ts): grown
 * files give the entries a whole import gives, at every split (a Claude Code compaction's two
 * lines apart, a last line half-written, a pi file, a Codex rollout); what was read before is not
 * read again; a file rewritten under the same name is said, not imported again; a copy of the file,
 * a deleted session and a state that does not read all fall back to reading the file whole.
 */
import type { SessionEntry } from "@base-context/protocol";
import { appendFileSync, copyFileSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { SessionStore } from "../store/index.js";
import { FakeCounter, sequentialIds } from "./fixtures/test-helpers.js";
import { ImportStates } from "./import-state.js";
import { SessionService } from "./service.js";

const dirs = tempDirs();
const FIXTURES = join(import.meta.dirname, "fixtures");
const CLAUDE = join(FIXTURES, "claude-code", "1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0.jsonl");
const CODEX = join(import.meta.dirname, "formats", "codex", "fixtures", "codex-rollout.jsonl");
const PI = join(FIXTURES, "pi-v3.jsonl");
const linesOf = (path: string) => readFileSync(path, "utf8").trimEnd().split("\n");

describe("imports that go on from where the last one stopped", () => {
  let folder: string;
  let file: string;
  let stores: SessionStore[];

  beforeEach(() => {
    folder = dirs.make();
    file = join(folder, "session.jsonl");
    stores = [];
  });
  afterEach(async () => {
    for (const store of stores) await store.close();
    dirs.remove(folder);
  });

  /** A service on a database of its own, saving import states in `states` (a folder name; none: no states). */
  const service = (name: string, states?: string) => {
    const ids = sequentialIds();
    const store = new SessionStore({ path: join(folder, `${name}.db`), ids, checkpoints: "sqlite" });
    stores.push(store);
    const importStates = states === undefined ? undefined : new ImportStates(join(folder, states));
    return { store, sessions: new SessionService(store, new FakeCounter(), { ids, import: { batchSize: 3, states: importStates } }) };
  };
  const entries = (store: SessionStore, id: string) =>
    [...store.entriesInOrder(id)].flat().map(({ entry }): SessionEntry => entry);

  it.each([
    ["Claude Code", CLAUDE, [10, 25, 26, 31, 36]],
    ["Codex", CODEX, [5, 21, 29, 33]],
    ["pi", PI, [2, 9, 15]],
  ])("%s: a file imported as it grows gives the entries one import of the whole file gives", async (_name, fixture, splits) => {
    const lines = linesOf(fixture);
    const growing = service("growing", "states");
    let added = 0;
    let id = "";
    for (const split of [...splits, lines.length]) {
      writeFileSync(file, `${lines.slice(0, split).join("\n")}\n`);
      const result = await growing.sessions.import({ path: file });
      id = result.session.id;
      added += result.addedEntries ?? 0;
      expect(result.entryCount).toBe(added);
    }
    const whole = service("whole");
    const once = await whole.sessions.import({ path: file });
    expect(entries(growing.store, id)).toEqual(entries(whole.store, once.session.id));
    expect((await growing.sessions.get({ sessionId: id })).leafId).toBe((await whole.sessions.get({ sessionId: id })).leafId);
  });

  it("reads only what was appended: a line read before is not read again (its skip is not reported twice)", async () => {
    const lines = linesOf(CLAUDE);
    const { sessions } = service("main", "states");
    writeFileSync(file, `${lines.slice(0, 34).join("\n")}\n`);
    const first = await sessions.import({ path: file });
    expect((first.skippedLines ?? []).map((skip) => skip.line)).toEqual([33]);
    writeFileSync(file, `${lines.join("\n")}\n`);
    const again = await sessions.import({ path: file });
    expect(again).toMatchObject({ updated: true, skippedLines: [] });
    expect(again.addedEntries).toBeGreaterThan(0);
    // Without a state (another home), the whole file is read again: line 33 is reported again.
    const other = new SessionService(stores[0]!, new FakeCounter(), { ids: sequentialIds() });
    expect(((await other.import({ path: file })).skippedLines ?? []).map((skip) => skip.line)).toEqual([33]);
  });

  it("a last line half-written is read, and read again once whole, without a duplicate", async () => {
    const lines = linesOf(CODEX);
    const { store, sessions } = service("main", "states");
    writeFileSync(file, `${lines.slice(0, 20).join("\n")}\n${lines[20]}`);
    const first = await sessions.import({ path: file });
    writeFileSync(file, `${lines.slice(0, 21).join("\n")}\n${lines[21]!.slice(0, 30)}`);
    const second = await sessions.import({ path: file });
    expect(second.addedEntries).toBe(0);
    expect(second.skippedLines).toEqual([{ line: 22, reason: expect.stringMatching(/^invalid JSON/) }]);
    writeFileSync(file, `${lines.join("\n")}\n`);
    await sessions.import({ path: file });
    const whole = service("whole");
    const once = await whole.sessions.import({ path: file });
    expect(entries(store, first.session.id)).toEqual(entries(whole.store, once.session.id));
  });

  it("a file rewritten under the same name is said, and nothing is added to the session", async () => {
    const lines = linesOf(CODEX);
    const { store, sessions } = service("main", "states");
    writeFileSync(file, `${lines.slice(0, 20).join("\n")}\n`);
    const first = await sessions.import({ path: file });
    const before = entries(store, first.session.id);
    // A line changed in the middle, then one more line: Codex's ids are line numbers, so a re-read would add near-copies.
    const changed = [...lines.slice(0, 10), lines[9]!, ...lines.slice(10, 21)];
    writeFileSync(file, `${changed.join("\n")}\n`);
    const again = await sessions.import({ path: file });
    expect(again).toMatchObject({ updated: true, addedEntries: 0, rewritten: true });
    expect(again.warning).toMatch(/was rewritten since it was imported.*nothing was added.*--new-id/);
    expect(entries(store, first.session.id)).toEqual(before);
    // A copy with a new id is the way to keep that version.
    const copy = await sessions.import({ path: file, newId: true });
    expect(copy.session.id).not.toBe(first.session.id);
  });

  it("a copy of the file (another inode, the same bytes) goes on from the saved point", async () => {
    const lines = linesOf(PI);
    lines.splice(5, 0, "{not json");
    const { sessions } = service("main", "states");
    writeFileSync(file, `${lines.slice(0, 10).join("\n")}\n`);
    expect(((await sessions.import({ path: file })).skippedLines ?? []).map((skip) => skip.line)).toEqual([6]);
    const copy = join(folder, "copy.jsonl");
    copyFileSync(file, copy);
    appendFileSync(copy, `${lines.slice(10).join("\n")}\n`);
    rmSync(file);
    renameSync(copy, file);
    // Line 6 is not read again: the import went on from line 11.
    expect(await sessions.import({ path: file })).toMatchObject({ updated: true, entryCount: 19, addedEntries: 11, skippedLines: [] });
  });

  it("a session deleted since, or a state that does not read, makes the import read the file whole", async () => {
    const lines = linesOf(CLAUDE);
    const { sessions } = service("main", "states");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const first = await sessions.import({ path: file });
    await sessions.delete({ sessionId: first.session.id });
    const anew = await sessions.import({ path: file });
    expect(anew).toMatchObject({ updated: false, entryCount: first.entryCount });
    const [state] = readdirSync(join(folder, "states"));
    const saved = JSON.parse(readFileSync(join(folder, "states", state!), "utf8")) as { parser: { aliases: unknown } };
    saved.parser.aliases = "not a list";
    writeFileSync(join(folder, "states", state!), JSON.stringify(saved));
    writeFileSync(file, `${lines.join("\n")}\n${lines[0]!.replace(/"uuid":"[^"]+"/, '"uuid":"00000000-0000-4000-8000-0000000000ff"')}\n`);
    const again = await sessions.import({ path: file });
    expect(again).toMatchObject({ updated: true, addedEntries: 1 });
    // Read whole: its unreadable line is reported again.
    expect((again.skippedLines ?? []).map((skip) => skip.line)).toEqual([33]);
  });

  it("stopped by its signal, an import that keeps what it read stores the lines read whole, and the next one goes on from there", async () => {
    const header = JSON.stringify({ type: "session", version: 3, id: "kept", timestamp: "2026-03-01T12:00:00.000Z", cwd: "/p" });
    const line = (n: number) =>
      JSON.stringify({
        type: "message",
        id: `e${n}`,
        parentId: n === 0 ? null : `e${n - 1}`,
        timestamp: "2026-03-01T12:00:01.000Z",
        message: { role: "user", content: `${n} ${"x".repeat(2000)}` },
      });
    // About 3 MB: three chunks of the file's reading.
    writeFileSync(file, `${[header, ...Array.from({ length: 1500 }, (_, n) => line(n))].join("\n")}\n`);
    const { store } = service("main", "states");
    const ids = sequentialIds();
    const sessions = new SessionService(store, new FakeCounter(), {
      ids,
      import: {
        batchSize: 100,
        states: new ImportStates(join(folder, "states")),
        limits: () => ({ maxImportLineBytes: 1 << 20, maxImportFileBytes: 1 << 30 }),
      },
    });
    const controller = new AbortController();
    const beginImport = store.beginImport.bind(store);
    store.beginImport = (session) => {
      const target = beginImport(session);
      const insert = target.insertBatchAsync.bind(target);
      // Out of time once the first batch is written: the read stops at the next chunk.
      target.insertBatchAsync = (batch) => {
        controller.abort(new Error("out of time"));
        return insert(batch);
      };
      return target;
    };
    const stopped = await sessions.import({ path: file }, { signal: controller.signal, keepWhatIsRead: true });
    store.beginImport = beginImport;
    expect(stopped.entryCount).toBeGreaterThan(0);
    expect(stopped.entryCount).toBeLessThan(1500);
    // The session is there, a prefix of the file's history, whole entries each.
    expect((await sessions.getCountedPath("kept")).map((counted) => counted.entry.id)).toEqual(
      Array.from({ length: stopped.entryCount }, (_, n) => `e${n}`),
    );
    const rest = await sessions.import({ path: file });
    expect(rest).toMatchObject({ updated: true, addedEntries: 1500 - stopped.entryCount, entryCount: 1500 });
    expect((await sessions.getCountedPath("kept")).map((counted) => counted.entry.id)).toEqual(Array.from({ length: 1500 }, (_, n) => `e${n}`));
  });
});
