import type { SessionEntry } from "@base-context/protocol";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError } from "../errors.js";
import { SessionStore } from "../store/index.js";
import type { TokenCounter } from "../tokens/counter.js";
import { FakeCounter, sequentialIds } from "./fixtures/test-helpers.js";
import { SessionService } from "./service.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const here = dirname(fileURLToPath(import.meta.url));
const fixture = (name: string) => join(here, "fixtures", name);
const examplePiSession = join(here, "..", "..", "..", "..", "examples", "sessions", "refactor-auth.jsonl");

async function appError(run: () => Promise<unknown>): Promise<AppError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

describe("pi JSONL import and export", () => {
  let folder: string;
  let store: SessionStore;
  let sessions: SessionService;

  const open = (name: string, counter: TokenCounter = new FakeCounter(), batchSize?: number) => {
    const ids = sequentialIds();
    const opened = new SessionStore({ path: join(folder, name), ids, checkpoints: "sqlite" });
    return { store: opened, sessions: new SessionService(opened, counter, { ids, import: { batchSize } }) };
  };
  const entriesOf = (sessionId: string): SessionEntry[] => [...store.entriesInOrder(sessionId)].flat().map((stored) => stored.entry);

  beforeEach(() => {
    folder = dirs.make();
    ({ store, sessions } = open("main.db"));
  });
  afterEach(async () => {
    await store.close();
    dirs.remove(folder);
  });

  describe("v3", () => {
    it("imports every entry type with the header's fields, tree, labels and the last line as leaf", async () => {
      const result = await sessions.import({ format: "pi-jsonl", path: fixture("pi-v3.jsonl") });
      expect(result.skippedLines).toEqual([]);
      expect(result.entryCount).toBe(19);
      expect(result.session).toEqual({
        id: "9d2f4b6a-8c1e-4f3a-b5d7-e9f1a3c5b7d9",
        cwd: "/home/dev/projects/shop",
        createdAt: "2026-01-10T08:00:00.000Z",
        parentSession: "/home/dev/.pi/agent/sessions/--home-dev-projects-shop--/2026-01-09T17-00-00-000Z_1234.jsonl",
        editor: { name: "vim", tabs: 2 },
        name: "Checkout refactor",
        // Which agent wrote it: recorded at import, never written back into a pi file (the export below is byte for byte).
        importedFrom: "pi-jsonl",
      });
      const id = result.session.id;
      const got = await sessions.get({ sessionId: id });
      expect(got.leafId).toBe("10000013");
      expect(store.labels(id)).toEqual(new Map([["1000000d", "server-move"], ["10000011", "validate-plan"]]));
      const tree = await sessions.tree({ sessionId: id });
      expect(tree.roots).toHaveLength(1);
      const context = await sessions.getContextPath(id);
      // The leaf's branch left the compaction behind (branch_summary hangs off 1000000a).
      expect(context.compaction).toBeUndefined();
      expect(context.entries.map((counted) => counted.entry.id)).toContain("10000010");
      const atCompactionBranch = await sessions.getContextPath(id, "1000000e");
      expect(atCompactionBranch.entries.map((counted) => counted.entry.id)).toEqual([
        "1000000a",
        "1000000b",
        "1000000c",
        "1000000d",
        "1000000e",
      ]);
      for (const counted of atCompactionBranch.entries) expect(counted.tokens).toBe(FakeCounter.expected(counted.entry));
    });

    it("exports the same bytes it imported, and the same bytes again after a re-import", async () => {
      const original = readFileSync(fixture("pi-v3.jsonl"), "utf8");
      const { session } = await sessions.import({ format: "pi-jsonl", content: original });
      const first = (await sessions.export({ sessionId: session.id, format: "pi-jsonl" })).content!;
      expect(first).toBe(original);

      const second = open("second.db");
      try {
        const again = await second.sessions.import({ format: "pi-jsonl", content: first });
        expect(again.session).toEqual(session);
        expect((await second.sessions.export({ sessionId: session.id, format: "pi-jsonl" })).content).toBe(first);
      } finally {
        await second.store.close();
      }
    });

    it("round-trips the example pi session byte for byte through a file", async () => {
      const { session, entryCount } = await sessions.import({ format: "pi-jsonl", path: examplePiSession });
      expect(entryCount).toBeGreaterThan(50);
      const out = join(folder, "out.jsonl");
      expect(await sessions.export({ sessionId: session.id, format: "pi-jsonl", path: out })).toEqual({ path: out });
      expect(readFileSync(out, "utf8")).toBe(readFileSync(examplePiSession, "utf8"));
      expect(readdirSync(folder).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    });

    it("exports a prune entry as a custom entry pi ignores, and imports it back as the prune entry", async () => {
      const { session } = await sessions.import({ format: "pi-jsonl", path: examplePiSession });
      const toolResult = entriesOf(session.id).find((entry) => entry.type === "message" && entry.message.role === "toolResult")!;
      const hidden = [{ entryId: toolResult.id, toolName: "read", args: "src/auth.ts", tokens: 1500, stubTokens: 25 }];
      const { entry: prune } = await sessions.append({ sessionId: session.id, entry: { type: "prune", hidden, tokensSaved: 1475 } });

      const exported = (await sessions.export({ sessionId: session.id, format: "pi-jsonl" })).content!;
      const line = JSON.parse(exported.trimEnd().split("\n").at(-1)!);
      expect(line).toEqual({
        type: "custom",
        id: prune.id,
        parentId: prune.parentId,
        timestamp: prune.timestamp,
        customType: "base-context.prune",
        data: { hidden, tokensSaved: 1475 },
      });

      const second = open("second.db");
      try {
        const again = await second.sessions.import({ format: "pi-jsonl", content: exported });
        expect(again.skippedLines).toEqual([]);
        const reimported = [...second.store.entriesInOrder(session.id)].flat().map((stored) => stored.entry).at(-1);
        expect(reimported).toEqual(prune);
        expect((await second.sessions.export({ sessionId: session.id, format: "pi-jsonl" })).content).toBe(exported);
      } finally {
        await second.store.close();
      }
    });

    it("keeps a custom entry of the prune type whose data is not a prune entry as the custom entry it is", async () => {
      const header = JSON.stringify({ type: "session", version: 3, id: "odd-prune", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" });
      const odd = {
        type: "custom",
        id: "a1",
        parentId: null,
        timestamp: "2026-01-01T00:00:01.000Z",
        customType: "base-context.prune",
        data: { hidden: "x" },
      };
      await sessions.import({ format: "pi-jsonl", content: `${header}\n${JSON.stringify(odd)}\n` });
      expect(entriesOf("odd-prune")).toEqual([odd]);
    });

    it("uses the cwd param over the header's", async () => {
      const { session } = await sessions.import({ format: "pi-jsonl", path: fixture("pi-v3.jsonl"), cwd: "/elsewhere" });
      expect(session.cwd).toBe("/elsewhere");
    });

    it("imports a grown pi file again by adding only its new entries, and says so; the same file again adds nothing", async () => {
      const lines = readFileSync(fixture("pi-v3.jsonl"), "utf8").trimEnd().split("\n");
      const path = join(folder, "grows.jsonl");
      writeFileSync(path, `${lines.slice(0, 12).join("\n")}\n`);
      const first = await sessions.import({ path });
      expect(first).toMatchObject({ updated: false, addedEntries: 11, entryCount: 11 });
      writeFileSync(path, `${lines.join("\n")}\n`);
      const again = await sessions.import({ path });
      expect(again).toMatchObject({ updated: true, addedEntries: 8, entryCount: 19, skippedLines: [] });
      expect((await sessions.get({ sessionId: first.session.id })).leafId).toBe("10000013");
      // The same as importing the whole file at once.
      const whole = open("whole.db");
      const once = await whole.sessions.import({ path });
      expect(entriesOf(first.session.id)).toEqual([...whole.store.entriesInOrder(once.session.id)].flat().map((stored) => stored.entry));
      await whole.store.close();
      expect(await sessions.import({ path })).toMatchObject({ updated: true, addedEntries: 0, entryCount: 19 });
    });

    it("refuses a second import of a version 1 file's session (its ids are made at each import) and leaves the first intact", async () => {
      const first = await sessions.import({ format: "pi-jsonl", path: fixture("pi-v1.jsonl") });
      const error = await appError(() => sessions.import({ format: "pi-jsonl", path: fixture("pi-v1.jsonl") }));
      expect(error.code).toBe("session_exists");
      expect((await sessions.get({ sessionId: first.session.id })).entryCount).toBe(9);
    });
  });

  describe("older versions", () => {
    it("migrates v1: fresh ids in a linear chain, firstKeptEntryIndex (header = 0) → firstKeptEntryId", async () => {
      const result = await sessions.import({ format: "pi-jsonl", path: fixture("pi-v1.jsonl") });
      expect(result.skippedLines).toEqual([]);
      const entries = entriesOf(result.session.id);
      expect(entries).toHaveLength(9);
      entries.forEach((entry, index) => {
        expect(entry.id).toMatch(/^e[0-9a-f]{7}$/);
        expect(entry.parentId).toBe(index === 0 ? null : entries[index - 1]!.id);
      });
      const compaction = entries.find((entry) => entry.type === "compaction")!;
      expect(compaction).not.toHaveProperty("firstKeptEntryIndex");
      // Index 7 counts the header as 0: the user message "Also reject titles…", the 7th entry.
      expect(compaction).toMatchObject({ firstKeptEntryId: entries[6]!.id });
      expect(entries[6]).toMatchObject({ message: { role: "user", content: "Also reject titles longer than 200 characters." } });
      expect(result.session).toMatchObject({ provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "off" });

      const context = await sessions.getContextPath(result.session.id);
      expect(context.entries.map((counted) => counted.entry.id)).toEqual(entries.slice(6).map((entry) => entry.id));
      const exported = (await sessions.export({ sessionId: result.session.id, format: "pi-jsonl" })).content!;
      expect(JSON.parse(exported.split("\n")[0]!)).toMatchObject({ type: "session", version: 3, provider: "anthropic" });
    });

    it("migrates v2: role hookMessage → custom, and repairs a trailing line without an id", async () => {
      const result = await sessions.import({ format: "pi-jsonl", path: fixture("pi-v2.jsonl") });
      expect(result.skippedLines).toEqual([]);
      const entries = entriesOf(result.session.id);
      expect(entries).toHaveLength(6);
      expect(entries.find((entry) => entry.id === "c3d4e5f6")).toMatchObject({ message: { role: "custom", customType: "git-status" } });
      const repaired = entries[5]!;
      // Made from the session and the line's number: the same at every import of the file.
      expect(repaired.id).toMatch(/^[0-9a-f]{8}$/);
      expect(repaired.parentId).toBe("e5f6a7b8");
      expect((await sessions.get({ sessionId: result.session.id })).leafId).toBe(repaired.id);
      expect(store.labels(result.session.id)).toEqual(new Map([["b2c3d4e5", "diagnosis"]]));
    });
  });

  describe("malformed input", () => {
    it("skips malformed lines with their line numbers and reasons, and imports the rest", async () => {
      const result = await sessions.import({ format: "pi-jsonl", path: fixture("pi-malformed.jsonl") });
      expect(result.skippedLines!.map((skip) => skip.line)).toEqual([3, 5, 6, 7, 8, 9]);
      const reasons = Object.fromEntries(result.skippedLines!.map((skip) => [skip.line, skip.reason]));
      expect(reasons[3]).toMatch(/invalid JSON/);
      expect(reasons[5]).toMatch(/not a JSON object/);
      expect(reasons[6]).toBe('unknown entry type "teleport"');
      expect(reasons[7]).toMatch(/"model_change" entry at "modelId"/);
      expect(reasons[8]).toMatch(/second session header/);
      expect(reasons[9]).toMatch(/duplicate entry id "20000001"/);
      const entries = entriesOf(result.session.id);
      expect(entries.map((entry) => [entry.id, entry.parentId])).toEqual([
        ["20000001", null],
        ["20000005", "20000001"],
        ["20000006", null], // its parent never appeared: a root, as pi shows it
      ]);
    });

    it("accepts a compaction whose first kept entry is not on its path; its context then starts at the compaction", async () => {
      const lines = [
        { type: "session", version: 3, id: "off-path", timestamp: "2026-02-02T00:00:00.000Z", cwd: "/w" },
        { type: "message", id: "a", parentId: null, timestamp: "2026-02-02T00:00:01.000Z", message: { role: "user", content: "a" } },
        { type: "message", id: "b", parentId: "a", timestamp: "2026-02-02T00:00:02.000Z", message: { role: "user", content: "b" } },
        {
          type: "compaction",
          id: "c",
          parentId: "a",
          timestamp: "2026-02-02T00:00:03.000Z",
          summary: "S",
          firstKeptEntryId: "b",
          tokensBefore: 5,
        },
        { type: "message", id: "d", parentId: "c", timestamp: "2026-02-02T00:00:04.000Z", message: { role: "user", content: "d" } },
      ];
      const result = await sessions.import({ format: "pi-jsonl", content: lines.map((line) => JSON.stringify(line)).join("\n") });
      expect(result.entryCount).toBe(4);
      const context = await sessions.getContextPath("off-path");
      expect(context.entries.map((counted) => counted.entry.id)).toEqual(["c", "d"]);
    });

    it("stores an unmigrated line as the file has it, and a rerooted one re-serialized", async () => {
      const content = [
        '{"type":"session","version":3,"id":"as-is","timestamp":"2026-02-02T00:00:00.000Z","cwd":"/w"}',
        '{"type": "message", "id": "a", "parentId": null, "timestamp": "2026-02-02T00:00:01.000Z", "message": {"role": "user", "content": "caf\u00e9"}}',
        '{"type":"message","id":"b","parentId":"gone","timestamp":"2026-02-02T00:00:02.000Z","message":{"role":"user","content":"b"}}',
      ].join("\n");
      await sessions.import({ format: "pi-jsonl", content });
      const [header, a, b] = (await sessions.export({ sessionId: "as-is", format: "pi-jsonl" })).content!.split("\n");
      expect(JSON.parse(header!)).toMatchObject({ id: "as-is" });
      expect(a).toBe(content.split("\n")[1]);
      expect(JSON.parse(a!).message.content).toBe("café");
      expect(b).toBe(
        '{"type":"message","id":"b","parentId":null,"timestamp":"2026-02-02T00:00:02.000Z","message":{"role":"user","content":"b"}}',
      );
    });

    it("fails on a file without a header and keeps nothing", async () => {
      const error = await appError(() => sessions.import({ format: "pi-jsonl", content: '{"type":"message","id":"x"}\n' }));
      expect(error.code).toBe("import_failed");
      expect((await appError(() => sessions.import({ format: "pi-jsonl", content: "" }))).code).toBe("import_failed");
      expect((await appError(() => sessions.import({ format: "pi-jsonl", path: join(folder, "missing.jsonl") }))).code).toBe("import_failed");
      expect((await sessions.list({})).sessions).toEqual([]);
    });

    it("deletes the partial session when an import fails midway", async () => {
      await store.close();
      const failing: TokenCounter = {
        options: { encoding: "o200k_base", estimator: "chars4" },
        countTextAsync: async () => 0,
        countEntry: async () => 1,
        dispose: async () => {},
      };
      ({ store, sessions } = open("fail.db", failing, 2));
      const lines = readFileSync(fixture("pi-v3.jsonl"), "utf8").split("\n");
      // Break the store midway: the 3rd batch's insert throws.
      let batches = 0;
      const original = store.beginImport.bind(store);
      store.beginImport = (session) => {
        const target = original(session);
        const insert = target.insertBatch.bind(target);
        target.insertBatch = (batch) => {
          if (++batches === 3) throw new Error("disk full");
          return insert(batch);
        };
        return target;
      };
      const error = await appError(() => sessions.import({ format: "pi-jsonl", content: lines.join("\n") }));
      expect(error.code).toBe("import_failed");
      expect(error.message).toMatch(/disk full/);
      expect(batches).toBe(3);
      expect(store.getSession("9d2f4b6a-8c1e-4f3a-b5d7-e9f1a3c5b7d9")).toBeUndefined();
      expect([...store.entriesInOrder("9d2f4b6a-8c1e-4f3a-b5d7-e9f1a3c5b7d9")]).toEqual([]);
    });

    it("keeps an importing session invisible until it completes", async () => {
      await store.close();
      ({ store, sessions } = open("slow.db", new FakeCounter(), 1));
      // Look from inside the import, after each batch is written (batches of one entry).
      const seenDuringImport: number[] = [];
      const original = store.beginImport.bind(store);
      store.beginImport = (session) => {
        const target = original(session);
        const insert = target.insertBatch.bind(target);
        target.insertBatch = (batch) => {
          const report = insert(batch);
          seenDuringImport.push(store.listSessions({ limit: 10 }).length, store.getSession(session.id) === undefined ? 0 : 1);
          return report;
        };
        return target;
      };
      await sessions.import({ format: "pi-jsonl", path: fixture("pi-v3.jsonl") });
      expect(seenDuringImport.length).toBeGreaterThan(2);
      expect(new Set(seenDuringImport)).toEqual(new Set([0]));
      expect((await sessions.list({})).sessions).toHaveLength(1);
    });
  });

  describe("export", () => {
    it("writes a session created through the API as a pi v3 file", async () => {
      const { session } = await sessions.create({ cwd: "/w", name: "api session" });
      await sessions.append({ sessionId: session.id, entry: { type: "message", message: { role: "user", content: "hi" } } });
      const content = (await sessions.export({ sessionId: session.id, format: "pi-jsonl" })).content!;
      const [header, entry, end] = content.split("\n");
      expect(JSON.parse(header!)).toEqual({
        type: "session",
        version: 3,
        id: session.id,
        timestamp: session.createdAt,
        cwd: "/w",
        name: "api session",
      });
      expect(Object.keys(JSON.parse(entry!))).toEqual(["type", "id", "parentId", "timestamp", "message"]);
      expect(end).toBe("");
    });

    it("reports an unwritable path and leaves no file behind", async () => {
      const { session } = await sessions.create({ cwd: "/w" });
      const target = join(folder, "no-such-dir", "out.jsonl");
      expect((await appError(() => sessions.export({ sessionId: session.id, format: "pi-jsonl", path: target }))).code).toBe("export_failed");
      expect(existsSync(target)).toBe(false);
    });

    it("refuses an unknown session", async () => {
      expect((await appError(() => sessions.export({ sessionId: "ghost", format: "pi-jsonl" }))).code).toBe("session_not_found");
    });
  });

  it("imports content with CRLF line endings", async () => {
    const crlf = readFileSync(fixture("pi-v3.jsonl"), "utf8").replace(/\n/g, "\r\n");
    writeFileSync(join(folder, "crlf.jsonl"), crlf);
    const fromFile = await sessions.import({ format: "pi-jsonl", path: join(folder, "crlf.jsonl") });
    expect(fromFile.skippedLines).toEqual([]);
    expect(fromFile.entryCount).toBe(19);
  });
});
