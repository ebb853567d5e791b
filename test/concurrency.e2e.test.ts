/**
 * Two daemon processes on one database (same BASE_CONTEXT_HOME), appending to one session at the
 * same time. Each append attaches to the leaf as it is when its transaction runs, so the session
 * must end as one chain holding every append, every parent an existing entry, nothing lost.
 */
import {
  EntryAppend,
  EntryAppendMany,
  SessionCreate,
  SessionGet,
  SessionPath,
  SessionTree,
  type SessionEntry,
} from "@base-context/protocol";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type TestDaemon } from "./support/daemon.js";

let home: string;
let a: TestDaemon;
let b: TestDaemon;
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "bc-e2e-shared-"));
  [a, b] = await Promise.all([startDaemon({ home }), startDaemon({ home })]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  rmSync(home, { recursive: true, force: true });
});

const N = 150;
const text = (entry: SessionEntry): string =>
  entry.type === "message" && entry.message.role === "user" && typeof entry.message.content === "string" ? entry.message.content : "";
const userEntry = (content: string) => ({ type: "message" as const, message: { role: "user" as const, content, timestamp: 1 } });

/** Asserts that `entries` is one chain root → leaf and returns it. */
function expectOneChain(entries: SessionEntry[]): void {
  expect(entries[0]!.parentId).toBeNull();
  for (let i = 1; i < entries.length; i++) expect(entries[i]!.parentId, `entry ${i} of the chain`).toBe(entries[i - 1]!.id);
  expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
}

// Hundreds of appends through two processes: allow for a loaded machine (a quiet one takes ~3 s).
describe("two daemons appending to one session", { timeout: 60_000 }, () => {
  it("loses no append: 2N entries in one chain, every parent existing, each writer's order kept", async () => {
    const { session } = await a.client.request(SessionCreate, { cwd: "/home/me/shared" });
    const sessionId = session.id;
    // The session created through one daemon is there for the other at once.
    expect(await b.client.request(SessionGet, { sessionId })).toMatchObject({ entryCount: 0, leafId: null });

    // Fire every append of both daemons without waiting for any reply.
    const fire = (d: TestDaemon, tag: string) =>
      Array.from({ length: N }, (_, i) => d.client.request(EntryAppend, { sessionId, entry: userEntry(`${tag}-${i}`) }));
    const [fromA, fromB] = await Promise.all([Promise.all(fire(a, "A")), Promise.all(fire(b, "B"))]);

    for (const result of [...fromA, ...fromB]) expect(result.leafId).toBe(result.entry.id);
    const got = await a.client.request(SessionGet, { sessionId });
    expect(got.entryCount).toBe(2 * N);
    expect(await b.client.request(SessionGet, { sessionId })).toEqual(got);

    const { entries } = await b.client.request(SessionPath, { sessionId, leafId: got.leafId });
    expect(entries).toHaveLength(2 * N);
    expectOneChain(entries);
    expect(entries.at(-1)!.id).toBe(got.leafId);

    // Every reply names an entry of the chain, with the parent the chain has for it.
    const byId = new Map(entries.map((e) => [e.id, e]));
    for (const { entry } of [...fromA, ...fromB]) expect(byId.get(entry.id)).toEqual(entry);

    // Nothing lost, nothing doubled, and each daemon's appends in the order it received them.
    const texts = entries.map(text);
    expect(new Set(texts)).toEqual(
      new Set([...Array.from({ length: N }, (_, i) => `A-${i}`), ...Array.from({ length: N }, (_, i) => `B-${i}`)]),
    );
    expect(texts.filter((t) => t.startsWith("A-"))).toEqual(Array.from({ length: N }, (_, i) => `A-${i}`));
    expect(texts.filter((t) => t.startsWith("B-"))).toEqual(Array.from({ length: N }, (_, i) => `B-${i}`));

    // The tree agrees: one root, no branches.
    const flat = await a.client.request(SessionTree, { sessionId, flat: true });
    expect(flat.nodes).toHaveLength(2 * N);
    expect(flat.nodes!.filter((n) => n.entry.parentId === null)).toHaveLength(1);
    const childCount = new Map<string, number>();
    for (const n of flat.nodes!) if (n.entry.parentId) childCount.set(n.entry.parentId, (childCount.get(n.entry.parentId) ?? 0) + 1);
    expect(Math.max(...childCount.values())).toBe(1);
  });

  it("keeps each appendMany batch contiguous while the other daemon appends single entries", async () => {
    const { session } = await b.client.request(SessionCreate, { cwd: "/home/me/shared" });
    const sessionId = session.id;
    const batches = Array.from({ length: 30 }, (_, i) =>
      a.client.request(EntryAppendMany, {
        sessionId,
        entries: [userEntry(`batch-${i}-0`), userEntry(`batch-${i}-1`), userEntry(`batch-${i}-2`)],
      }),
    );
    const singles = Array.from({ length: 60 }, (_, i) => b.client.request(EntryAppend, { sessionId, entry: userEntry(`single-${i}`) }));
    await Promise.all([...batches, ...singles]);

    const { leafId, entryCount } = await a.client.request(SessionGet, { sessionId });
    expect(entryCount).toBe(30 * 3 + 60);
    const { entries } = await a.client.request(SessionPath, { sessionId, leafId });
    expect(entries).toHaveLength(entryCount);
    expectOneChain(entries);
    const texts = entries.map(text);
    for (let i = 0; i < 30; i++) {
      const at = texts.indexOf(`batch-${i}-0`);
      expect(texts.slice(at, at + 3)).toEqual([`batch-${i}-0`, `batch-${i}-1`, `batch-${i}-2`]);
    }
  });

  it("writes a requestId once even when both daemons receive the same requests at the same time", async () => {
    const { session } = await a.client.request(SessionCreate, { cwd: "/home/me/shared" });
    const sessionId = session.id;
    const K = 40;
    const send = (d: TestDaemon) =>
      Array.from({ length: K }, (_, i) =>
        d.client.request(EntryAppend, { sessionId, entry: userEntry(`req-${i}`), requestId: `req-${i}` }),
      );
    const [fromA, fromB] = await Promise.all([Promise.all(send(a)), Promise.all(send(b))]);
    // Both daemons answer each requestId with the same, single write.
    expect(fromB).toEqual(fromA);
    const { leafId, entryCount } = await b.client.request(SessionGet, { sessionId });
    expect(entryCount).toBe(K);
    const { entries } = await b.client.request(SessionPath, { sessionId, leafId });
    expectOneChain(entries);
    expect(entries.map(text).sort()).toEqual(Array.from({ length: K }, (_, i) => `req-${i}`).sort());
  });
});
