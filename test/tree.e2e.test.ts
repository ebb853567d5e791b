/**
 * A session as a tree: branches, labels set / changed / cleared, the current leaf, and the flat
 * form of session/tree.
 */
import {
  EntryAppend,
  ErrorCodes,
  LabelSet,
  SessionBranch,
  SessionGet,
  SessionPath,
  SessionTree,
  type SessionEntry,
  type TreeNode,
} from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { useDaemon } from "./support/daemon.js";
import { appendAll, assistant, createSession, rpcError, user } from "./fixtures/e2e.js";

const d = useDaemon();

/** A compact picture of a tree: `[id, label?, leaf?, children]`, children in order. */
type Shape = { id: string; label?: string; leaf?: true; children: Shape[] };
function shape(nodes: TreeNode[]): Shape[] {
  return nodes.map((node) => ({
    id: node.entry.id,
    ...(node.label !== undefined ? { label: node.label } : {}),
    ...(node.isLeaf ? { leaf: true as const } : {}),
    children: shape(node.children),
  }));
}
const leafNode = (id: string, children: Shape[] = []): Shape => ({ id, leaf: true, children });
const node = (id: string, children: Shape[] = [], label?: string): Shape => ({ id, ...(label !== undefined ? { label } : {}), children });

/**
 * q1 → a1 → q2 → a2           (first branch)
 *        ↘ q2b → a2b          (second branch from a1, appended later)
 */
async function twoBranches(sessionId: string) {
  const [q1, a1, q2, a2] = await appendAll(d.client, sessionId, [user("q1"), assistant("a1"), user("q2"), assistant("a2")]);
  await d.client.request(SessionBranch, { sessionId, entryId: a1!.id });
  const [q2b, a2b] = await appendAll(d.client, sessionId, [user("q2b"), assistant("a2b")]);
  return { q1: q1!, a1: a1!, q2: q2!, a2: a2!, q2b: q2b!, a2b: a2b! };
}

describe("session/tree", () => {
  it("is empty for a new session", async () => {
    const sessionId = await createSession(d.client);
    expect(await d.client.request(SessionTree, { sessionId })).toEqual({ roots: [], leafId: null });
  });

  it("nests entries under their parents, siblings in the order they were written, the leaf marked", async () => {
    const sessionId = await createSession(d.client);
    const e = await twoBranches(sessionId);
    const tree = await d.client.request(SessionTree, { sessionId });
    expect(tree.leafId).toBe(e.a2b.id);
    expect(shape(tree.roots)).toEqual([
      node(e.q1.id, [node(e.a1.id, [node(e.q2.id, [node(e.a2.id)]), node(e.q2b.id, [leafNode(e.a2b.id)])])]),
    ]);
    // Children in time order: the first branch was written first.
    const a1 = tree.roots[0]!.children[0]!;
    const [first, second] = a1.children.map((c) => Date.parse(c.entry.timestamp));
    expect(first).toBeLessThanOrEqual(second!);
    // Nodes carry the full stored entries.
    expect(tree.roots[0]!.entry).toEqual(e.q1);
  });

  it("moves the isLeaf mark with session/branch, without adding nodes", async () => {
    const sessionId = await createSession(d.client);
    const e = await twoBranches(sessionId);
    await d.client.request(SessionBranch, { sessionId, entryId: e.q2.id });
    const tree = await d.client.request(SessionTree, { sessionId });
    expect(tree.leafId).toBe(e.q2.id);
    expect(shape(tree.roots)).toEqual([
      node(e.q1.id, [node(e.a1.id, [leafNode(e.q2.id, [node(e.a2.id)]), node(e.q2b.id, [node(e.a2b.id)])])]),
    ]);
  });

  it("has several roots after a branch to null, and no node marked as leaf while the leaf is null", async () => {
    const sessionId = await createSession(d.client);
    const [q1] = await appendAll(d.client, sessionId, [user("q1")]);
    await d.client.request(SessionBranch, { sessionId, entryId: null });
    const [r2] = await appendAll(d.client, sessionId, [user("second root")]);
    expect(shape((await d.client.request(SessionTree, { sessionId })).roots)).toEqual([node(q1!.id), leafNode(r2!.id)]);
    await d.client.request(SessionBranch, { sessionId, entryId: null });
    const tree = await d.client.request(SessionTree, { sessionId });
    expect(tree.leafId).toBeNull();
    expect(shape(tree.roots)).toEqual([node(q1!.id), node(r2!.id)]);
  });

  it("with flat: true, lists every entry once, parents before children, in insertion order", async () => {
    const sessionId = await createSession(d.client);
    const e = await twoBranches(sessionId);
    await d.client.request(LabelSet, { sessionId, targetId: e.a1.id, label: "fork point" });
    const flat = await d.client.request(SessionTree, { sessionId, flat: true });
    expect(flat.roots).toEqual([]);
    const nodes = flat.nodes!;
    const order = [e.q1, e.a1, e.q2, e.a2, e.q2b, e.a2b].map((x) => x.id);
    expect(nodes.slice(0, 6).map((n) => n.entry.id)).toEqual(order);
    expect(nodes).toHaveLength(7);
    expect(nodes[6]!.entry).toMatchObject({ type: "label", targetId: e.a1.id, label: "fork point" });
    expect(nodes.find((n) => n.entry.id === e.a1.id)?.label).toBe("fork point");
    expect(nodes.filter((n) => n.isLeaf).map((n) => n.entry.id)).toEqual([flat.leafId]);
    const seen = new Set<string>();
    for (const n of nodes) {
      if (n.entry.parentId !== null) expect(seen.has(n.entry.parentId)).toBe(true);
      seen.add(n.entry.id);
    }
  });
});

describe("label/set", () => {
  it("labels an entry, shown on its tree node; the label entry is appended under the leaf and becomes the leaf", async () => {
    const sessionId = await createSession(d.client);
    const e = await twoBranches(sessionId);
    const { entry } = await d.client.request(LabelSet, { sessionId, targetId: e.a1.id, label: "checkpoint" });
    expect(entry).toMatchObject({ type: "label", targetId: e.a1.id, label: "checkpoint", parentId: e.a2b.id });
    expect((await d.client.request(SessionGet, { sessionId })).leafId).toBe(entry.id);

    const tree = await d.client.request(SessionTree, { sessionId });
    expect(shape(tree.roots)).toEqual([
      node(e.q1.id, [
        node(e.a1.id, [node(e.q2.id, [node(e.a2.id)]), node(e.q2b.id, [node(e.a2b.id, [leafNode(entry.id)])])], "checkpoint"),
      ]),
    ]);
  });

  it("changes a label (the latest wins) and labels entries on other branches", async () => {
    const sessionId = await createSession(d.client);
    const e = await twoBranches(sessionId);
    await d.client.request(LabelSet, { sessionId, targetId: e.a1.id, label: "v1" });
    await d.client.request(LabelSet, { sessionId, targetId: e.a1.id, label: "v2" });
    await d.client.request(LabelSet, { sessionId, targetId: e.a2.id, label: "abandoned" });
    const labels = labelsOf((await d.client.request(SessionTree, { sessionId })).roots);
    expect(labels).toEqual(new Map([[e.a1.id, "v2"], [e.a2.id, "abandoned"]]));
  });

  it("clears a label with null: the label entry has no label field and the node no label", async () => {
    const sessionId = await createSession(d.client);
    const e = await twoBranches(sessionId);
    await d.client.request(LabelSet, { sessionId, targetId: e.q1.id, label: "start" });
    await d.client.request(LabelSet, { sessionId, targetId: e.a1.id, label: "keep" });
    const { entry } = await d.client.request(LabelSet, { sessionId, targetId: e.q1.id, label: null });
    expect(entry.type).toBe("label");
    expect(entry).not.toHaveProperty("label");
    const tree = await d.client.request(SessionTree, { sessionId });
    expect(labelsOf(tree.roots)).toEqual(new Map([[e.a1.id, "keep"]]));
    expect(tree.roots[0]).not.toHaveProperty("label");
  });

  it("follows label entries appended directly with entry/append too", async () => {
    const sessionId = await createSession(d.client);
    const [q1] = await appendAll(d.client, sessionId, [user("q1")]);
    await d.client.request(EntryAppend, { sessionId, entry: { type: "label", targetId: q1!.id, label: "direct" } });
    expect(labelsOf((await d.client.request(SessionTree, { sessionId })).roots)).toEqual(new Map([[q1!.id, "direct"]]));
    await d.client.request(EntryAppend, { sessionId, entry: { type: "label", targetId: q1!.id } });
    expect(labelsOf((await d.client.request(SessionTree, { sessionId })).roots)).toEqual(new Map());
  });

  it("refuses an unknown target with entry_not_found and an empty label with -32602, writing nothing", async () => {
    const sessionId = await createSession(d.client);
    const [q1] = await appendAll(d.client, sessionId, [user("q1")]);
    const unknown = await rpcError(d.client.request(LabelSet, { sessionId, targetId: "abcdef12", label: "x" }));
    expect(unknown.code).toBe(ErrorCodes.EntryNotFound);
    expect(unknown.data?.code).toBe("entry_not_found");
    const empty = await rpcError(d.client.request(LabelSet, { sessionId, targetId: q1!.id, label: "" }));
    expect(empty.code).toBe(ErrorCodes.InvalidParams);
    expect(await d.client.request(SessionGet, { sessionId })).toMatchObject({ entryCount: 1, leafId: q1!.id });
  });

  it("puts the label entry itself on the session path, after the entry it labels", async () => {
    const sessionId = await createSession(d.client);
    const [q1] = await appendAll(d.client, sessionId, [user("q1")]);
    const { entry } = await d.client.request(LabelSet, { sessionId, targetId: q1!.id, label: "x" });
    const path = await d.client.request(SessionPath, { sessionId });
    expect(path.entries.map((x: SessionEntry) => x.id)).toEqual([q1!.id, entry.id]);
  });
});

function labelsOf(roots: TreeNode[]): Map<string, string> {
  const labels = new Map<string, string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.label !== undefined) labels.set(n.entry.id, n.label);
    stack.push(...n.children);
  }
  return labels;
}
