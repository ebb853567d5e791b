/**
 * session/import of Codex rollouts through the format registry: detection (also of a first line
 * too long to read whole), what is stored and counted, incremental re-import as Codex appends,
 * and refusals that name the formats.
 */
import type { RetentionReport } from "@base-context/protocol";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError } from "../../../errors.js";
import { SessionStore } from "../../../store/index.js";
import { FakeCounter, sequentialIds } from "../../fixtures/test-helpers.js";
import { SessionService } from "../../service.js";
import { detectFormat } from "../registry.js";
import { tempDirs } from "../../../../../../test/support/temp-dir.js";

const dirs = tempDirs();
const FIXTURE = new URL("./fixtures/codex-rollout.jsonl", import.meta.url);
const fixtureLines = () => readFileSync(FIXTURE, "utf8").trim().split("\n");

describe("importing Codex rollouts", () => {
  let folder: string;
  let store: SessionStore;
  let sessions: SessionService;

  beforeEach(() => {
    folder = dirs.make();
    const ids = sequentialIds();
    store = new SessionStore({ path: join(folder, "codex.db"), ids, checkpoints: "sqlite" });
    sessions = new SessionService(store, new FakeCounter(), { ids, import: { batchSize: 3 } });
  });
  afterEach(async () => {
    await store.close();
    dirs.remove(folder);
  });

  const write = (name: string, lines: readonly string[]) => {
    const path = join(folder, name);
    writeFileSync(path, `${lines.join("\n")}\n`);
    return path;
  };
  const pathOf = async (sessionId: string) => (await sessions.path({ sessionId })).entries;

  it("detects the format from the session_meta line, even cut short, and nothing else as Codex", () => {
    const [meta] = fixtureLines();
    expect(detectFormat([meta!])?.name).toBe("codex-jsonl");
    // Codex's session_meta carries its whole system prompt: detection may see only its start.
    const long = JSON.stringify({ timestamp: "2026-05-02T10:00:00Z", type: "session_meta", payload: { id: "x", base_instructions: "y".repeat(100_000) } });
    expect(detectFormat([long.slice(0, 65_536)])?.name).toBe("codex-jsonl");
    expect(detectFormat(['{"type":"session","version":3,"id":"p","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}'])?.name).toBe("pi-jsonl");
    expect(detectFormat(['{"timestamp":"2026-05-02T10:00:00Z","type":"response_item","payload":{}}'])).toBeUndefined();
  });

  it("imports the fixture without naming the format: entries, counted lines, bad lines by number", async () => {
    const result = await sessions.import({ path: FIXTURE.pathname });
    expect(result.format).toBe("codex-jsonl");
    expect(result.session).toMatchObject({ id: "7f9f9a2e-1b3c-4f5d-8e7a-000000000001", cwd: "/home/dev/shop" });
    expect(result.skippedLines).toEqual([
      { line: 22, reason: expect.stringMatching(/^invalid JSON.*; bridged: the next entry \(line 24\) follows "cx21"/), bridgedTo: "cx21" },
      { line: 25, reason: "not a JSON object" },
    ]);
    expect(result.ignoredLines).toMatchObject({ event_msg: 3, 'line type "world_state"': 1, "turn_context (nothing changed)": 1 });
    const entries = await pathOf(result.session.id);
    expect(entries).toHaveLength(result.entryCount);
    expect(entries.at(-1)).toMatchObject({ id: "cx34", type: "message" });
    expect(entries.filter((entry) => entry.type === "compaction")).toHaveLength(1);
  });

  it("checks Codex's compaction against the context it replaced, as Claude Code's: the report in details.retention", async () => {
    const result = await sessions.import({ path: FIXTURE.pathname });
    const compaction = (await pathOf(result.session.id)).find((entry) => entry.type === "compaction");
    expect(compaction?.details).toMatchObject({ source: "codex" });
    const { retention } = compaction!.details as { retention: RetentionReport };
    // Its summary names neither failing command's first line, and not the user's last request.
    expect(retention.errors).toEqual({ kept: 0, total: 2 });
    expect(retention.missing.errors).toEqual(["FAIL src/cart.test.ts", "ls: cannot access 'missing-dir': No such file or directory"]);
    expect(retention.requests).toEqual({ kept: 1, total: 2 });
    expect(retention.missing.requests).toEqual(["Write the test, then summarize."]);
  });

  it("re-imports as Codex appends: same session, only the new lines added, nothing twice", async () => {
    const lines = fixtureLines();
    const path = write("rollout-2026-05-02T10-00-00-7f9f.jsonl", lines.slice(0, 20));
    const first = await sessions.import({ path });
    expect(first.updated).not.toBe(true);
    const before = await pathOf(first.session.id);

    // Codex is still writing: the last line is half there, read on the next import.
    appendFileSync(path, `${lines.slice(20, 28).join("\n")}\n${lines[28]!.slice(0, 40)}`);
    const second = await sessions.import({ path });
    expect(second).toMatchObject({ updated: true, session: { id: first.session.id } });
    expect(second.skippedLines?.at(-1)).toMatchObject({ line: 29, reason: expect.stringMatching(/^invalid JSON/) });

    writeFileSync(path, `${lines.join("\n")}\n`);
    const third = await sessions.import({ path });
    const after = await pathOf(first.session.id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(new Set(after.map((entry) => entry.id)).size).toBe(after.length);
    expect(first.entryCount + (second.addedEntries ?? 0) + (third.addedEntries ?? 0)).toBe(after.length);

    // The whole file imported at once gives the same entries.
    const fresh = new SessionService(store, new FakeCounter(), { ids: sequentialIds() });
    const copy = await fresh.import({ path, newId: true });
    expect((await pathOf(copy.session.id)).map(({ id, type, parentId }) => [id, type, parentId])).toEqual(
      after.map(({ id, type, parentId }) => [id, type, parentId]),
    );
    expect((await sessions.import({ path })).addedEntries).toBe(0);
  });

  it("refuses a file that is none of the formats, and a Codex file given the wrong format", async () => {
    const junk = write("junk.jsonl", ['{"hello":"world"}']);
    const error = await sessions.import({ path: junk }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect((error as Error).message).toMatch(/codex-jsonl/);
    const rollout = write("rollout.jsonl", fixtureLines());
    await expect(sessions.import({ path: rollout, format: "pi-jsonl" })).rejects.toThrow(/pi/);
    const orphan = write("no-meta.jsonl", fixtureLines().slice(1));
    await expect(sessions.import({ path: orphan, format: "codex-jsonl" })).rejects.toThrow(/session_meta/);
    expect((await sessions.list({})).sessions).toEqual([]);
  });
});
