import type { EntryInput } from "@base-context/protocol";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionStore, type SessionRecord } from "../store/index.js";
import type { OwnerProbe } from "../store/owner.js";
import { ENGINES, useTestStores } from "../store/test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { sequentialIds } from "./fixtures/test-helpers.js";
import { migrateSessions, type SessionOutcome } from "./migrate.js";
import { checksumStored } from "./session-checksum.js";

const dirs = tempDirs();
const user = (text: string): EntryInput => ({ type: "message", message: { role: "user", content: text } });
const assistant = (text: string): EntryInput => ({
  type: "message",
  message: { role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m" },
});
const deadOwners: OwnerProbe = { exists: () => false, startOf: () => null };

function appendOne(store: SessionStore, sessionId: string, entry: EntryInput, options: { parentId?: string | null; tokens?: number } = {}) {
  const outcome = store.append({ sessionId, entries: [entry], parentId: options.parentId, tokens: [options.tokens ?? null] });
  if (outcome.status !== "appended") throw new Error(`unexpected ${outcome.status}`);
  return outcome.entries[0]!.entry;
}

/** Everything a copy must keep: the row, every entry's JSON and count in order, the labels. */
function snapshot(store: SessionStore, sessionId: string) {
  const rows = [...store.entryRowPages(sessionId)].flat();
  return { session: store.getSession(sessionId), rows, labels: [...store.labels(sessionId)] };
}

function statuses(outcomes: readonly SessionOutcome[]) {
  return Object.fromEntries(outcomes.map((outcome) => [outcome.sessionId, outcome.status]));
}

// From a SQLite file into a store of each engine (and back: the copy reads through the same contract).
describe.each(ENGINES)("migrateSessions into %s", (engine) => {
  const stores = useTestStores(engine);
  let folder: string;
  let source: SessionStore;
  let target: SessionStore;
  /** SQLite tells a dead importer by its pid (the probe stands for one); PostgreSQL by its lease, released when its store closes. */
  const openTarget = (ownerProbe?: OwnerProbe) => stores.open(ownerProbe && engine === "sqlite" ? { ownerProbe } : {});

  beforeEach(() => {
    folder = dirs.make();
    source = new SessionStore({ path: join(folder, "source.db"), ids: sequentialIds(), checkpoints: "sqlite" });
    target = openTarget();
  });
  afterEach(async () => {
    await source.close();
    dirs.remove(folder);
  });

  /** A session with everything a copy could lose: branches, a moved leaf, labels, a rename, counts, header fields. */
  function richSession(id: string): void {
    source.createSession({
      id,
      cwd: "/projects/app",
      createdAt: "2026-02-01T08:00:00.000Z",
      parentSession: "/sessions/parent.jsonl",
      headerExtra: { version: 3, name: "first name", custom: { nested: [1, "two"] } },
      modifiedMs: 0,
    });
    const a = appendOne(source, id, user("hello"), { tokens: 3 });
    const b = appendOne(source, id, assistant("hi there"), { tokens: 5 });
    appendOne(source, id, user("branch one"));
    appendOne(source, id, user("branch two"), { parentId: b.id, tokens: 4 });
    appendOne(source, id, { type: "label", targetId: a.id, label: "start" });
    appendOne(source, id, { type: "session_info", name: "renamed" });
    // The position is no longer the last entry (after a navigation back).
    source.setLeaf(id, b.id);
  }

  it("copies sessions exactly: row fields, entries' stored JSON in order, counts, labels, position", async () => {
    richSession("s-rich");
    source.createSession({ id: "s-empty", cwd: "/x", createdAt: "2026-02-02T08:00:00.000Z", modifiedMs: 5 });

    const report = await migrateSessions(source, target, { pageSize: 2 });

    expect(report).toMatchObject({ copied: 2, skipped: 0, conflicts: 0, failed: 0, notAttempted: 0 });
    for (const id of ["s-rich", "s-empty"]) expect(snapshot(target, id)).toEqual(snapshot(source, id));
    expect(target.getSession("s-rich")).toMatchObject({ name: "renamed", leafId: source.getSession("s-rich")!.leafId, entryCount: 6 });
    const copied = report.sessions.find((outcome) => outcome.sessionId === "s-rich");
    expect(copied).toMatchObject({ status: "copied", entryCount: 6, checksum: checksumStored(target, target.getSession("s-rich")!).checksum });
  });

  it("skips sessions already on the target identically, so a second run copies nothing", async () => {
    richSession("s-1");
    await migrateSessions(source, target);
    const again = await migrateSessions(source, target);
    expect(again).toMatchObject({ copied: 0, skipped: 1, conflicts: 0, failed: 0 });
    expect(again.sessions[0]).toMatchObject({ status: "skipped", reason: "identical on the target", entryCount: 6 });
    expect(target.getSession("s-1")!.entryCount).toBe(6);
  });

  it("reports a session that differs on the target as a conflict and leaves it alone; --overwrite replaces it", async () => {
    richSession("s-1");
    await migrateSessions(source, target);
    appendOne(target, "s-1", user("continued on the target"));
    const before = snapshot(target, "s-1");

    const conflict = await migrateSessions(source, target);
    expect(conflict).toMatchObject({ copied: 0, conflicts: 1 });
    expect(conflict.sessions[0]).toMatchObject({
      status: "conflict",
      source: { entryCount: 6 },
      target: { entryCount: 7 },
      difference: "6 entries on the source, 7 on the target: the target has 1 more after the same 6 (it was continued there)",
    });
    expect(snapshot(target, "s-1")).toEqual(before);

    target.deleteSession("s-1");
    await migrateSessions(source, target);
    const firstId = (JSON.parse([...source.entryRowPages("s-1")].flat()[0]!.json) as { id: string }).id;
    source.setLeaf("s-1", firstId);
    const moved = await migrateSessions(source, target);
    expect(moved.sessions[0]).toMatchObject({ status: "conflict", difference: "the same 6 entries, but the session's leafId differs" });

    const replaced = await migrateSessions(source, target, { overwrite: true });
    expect(replaced.sessions[0]).toMatchObject({ status: "copied", replaced: true });
    expect(snapshot(target, "s-1")).toEqual(snapshot(source, "s-1"));
  });

  it("resumes after a copy cut off midway: the half-copied session is removed and copied again, nothing is duplicated", async () => {
    richSession("s-1");
    richSession("s-2");
    const interrupt = new AbortController();
    const cut = await migrateSessions(source, target, {
      pageSize: 2,
      signal: interrupt.signal,
      onEntries: (sessionId, copied) => {
        if (sessionId === "s-1" && copied === 4) interrupt.abort();
      },
    });
    expect(cut.stopped).toEqual({ reason: "interrupted", interrupted: true });
    expect(statuses(cut.sessions)).toMatchObject({ "s-1": "failed" });
    const firstId = (JSON.parse([...source.entryRowPages("s-1")].flat()[0]!.json) as { id: string }).id;
    expect(target.hasEntry("s-1", firstId)).toBe(false);

    const resumed = await migrateSessions(source, target);
    expect(resumed.failed).toBe(0);
    expect(resumed.copied + resumed.skipped).toBe(2);
    for (const id of ["s-1", "s-2"]) expect(snapshot(target, id)).toEqual(snapshot(source, id));
  });

  it("takes over a half-copied session whose process died (killed, or its connection lost)", async () => {
    richSession("s-1");
    // A copy that a process began and never finished: the session is invisible, half its entries written.
    const half = target.beginImport({ id: "s-1", cwd: "/projects/app", createdAt: "2026-02-01T08:00:00.000Z", modifiedMs: 0 });
    const rows = [...source.entryRowPages("s-1")].flat().slice(0, 3);
    half.insertBatch(rows.map((row, index) => ({ line: index + 1, entry: JSON.parse(row.json), json: row.json, tokens: row.tokens })));
    await target.close();
    target = openTarget(deadOwners);
    expect(target.getSession("s-1")).toBeUndefined();

    const report = await migrateSessions(source, target);
    expect(report).toMatchObject({ copied: 1, failed: 0 });
    expect(snapshot(target, "s-1")).toEqual(snapshot(source, "s-1"));
  });

  it("copies again a session that changes on the source while it is copied, so the copy is of one consistent state", async () => {
    richSession("s-1");
    let appended = false;
    const report = await migrateSessions(source, target, {
      pageSize: 2,
      onEntries: () => {
        if (appended) return;
        appended = true;
        appendOne(source, "s-1", user("written by a daemon during the copy"));
      },
    });
    expect(report).toMatchObject({ copied: 1, failed: 0 });
    expect(snapshot(target, "s-1")).toEqual(snapshot(source, "s-1"));
    expect(target.getSession("s-1")!.entryCount).toBe(7);
  });

  it("reports a session another live process is writing on the target as failed, and copies the others", async () => {
    richSession("s-1");
    richSession("s-2");
    target.beginImport({ id: "s-1", cwd: "/elsewhere", createdAt: "2026-01-01T00:00:00.000Z", modifiedMs: 0 });
    const report = await migrateSessions(source, target);
    expect(statuses(report.sessions)).toEqual({ "s-1": "failed", "s-2": "copied" });
    expect(report.sessions.find((outcome) => outcome.sessionId === "s-1")).toMatchObject({ reason: expect.stringContaining("another process") });
    expect(report.stopped).toBeUndefined();
  });

  it("changes nothing on the source", async () => {
    richSession("s-1");
    const before: SessionRecord[] = source.listSessions({ limit: 10 });
    const rows = snapshot(source, "s-1");
    await migrateSessions(source, target);
    expect(source.listSessions({ limit: 10 })).toEqual(before);
    expect(snapshot(source, "s-1")).toEqual(rows);
  });
});
