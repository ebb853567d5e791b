import type { SessionEntry, TreeHookEvent } from "@base-context/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError, CancelledError } from "../errors.js";
import type { TreeHookContext, TreeHookOutcome, TreeHooks } from "../hooks/tree-hooks.js";
import { assistant, toolResult, treeFixture, user, type TreeFixture } from "./test-support.js";

/** Hooks that record their events and answer what the test says. */
class ScriptedHooks implements TreeHooks {
  readonly events: { event: TreeHookEvent; context: TreeHookContext }[] = [];
  constructor(public answer: TreeHookOutcome = undefined) {}
  async runTreeHook(event: TreeHookEvent, _signal: AbortSignal, context: TreeHookContext): Promise<TreeHookOutcome> {
    this.events.push({ event, context });
    return this.answer;
  }
}

/**
 *   u1 ─ a1 ─ t1 ─ a2 ─┬─ u2 ─ a3        (branch A, the leaf)
 *                      └─ u3 ─ a4        (branch B)
 */
async function branchedSession(f: TreeFixture) {
  const u1 = await f.append(user("fix the login bug"));
  const a1 = await f.append(assistant("let me read it", [{ name: "read", path: "src/auth.ts" }]));
  const t1 = await f.append(toolResult("read-0", "read", "export function login() {}"));
  const a2 = await f.append(assistant("fixed", [{ name: "edit", path: "src/auth.ts" }]));
  const u3 = await f.append(user("try memcached"));
  const a4 = await f.append(assistant("memcached is in"));
  const u2 = await f.append(user("try redis"), a2.id);
  const a3 = await f.append(assistant("redis works", [{ name: "write", path: "src/cache.ts" }]));
  return { u1, a1, t1, a2, u2, a3, u3, a4 };
}

const ids = (entries: readonly SessionEntry[]) => entries.map((entry) => entry.id);

describe("TreeService.navigate", () => {
  let f: TreeFixture;
  let hooks: ScriptedHooks;
  beforeEach(async () => {
    hooks = new ScriptedHooks();
    f = await treeFixture({ hooks });
  });
  afterEach(async () => f.close());

  it("summarizes the branch being left under the target's parent and hands back the target's text", async () => {
    const s = await branchedSession(f);
    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.u3.id, summarize: true });

    expect(result).toMatchObject({ status: "moved", editorText: "try memcached" });
    expect(result.summaryEntry).toMatchObject({ type: "branch_summary", parentId: s.a2.id, fromId: s.a3.id });
    expect(result.leafId).toBe(result.summaryEntry!.id);
    expect(f.leaf()).toBe(result.summaryEntry!.id);
    expect(f.summarizer.requests).toHaveLength(1);
    expect(f.summarizer.requests[0]!.kind).toBe("branch");
    expect(f.summarizer.requests[0]!.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(result.summaryEntry).toMatchObject({
      details: { readFiles: [], modifiedFiles: ["src/cache.ts"], summarizer: "test:recorder" },
    });
  });

  it("cuts a summarizer's branch summary to limits.maxSummaryBytes before storing it, leaving room for repair", async () => {
    const s = await branchedSession(f);
    f.settings.limits.maxSummaryBytes = 2048;
    f.summarizer.text = `## Goal\n${"b".repeat(100_000)}`;
    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.u3.id, summarize: true });
    const summary = (result.summaryEntry as { summary: string }).summary;
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(2048);
    // The body is cut (one note), the repair lines after it are kept, and the report says so.
    expect(summary).toMatch(
      /## Goal\nb+\n\n\[summary cut at 2048 bytes: limits\.maxSummaryBytes\]\n\n## Critical Context\n- File modified: `src\/cache\.ts`$/,
    );
    expect(summary.split("[summary cut at").length - 1).toBe(1);
    expect(result.retention?.files).toEqual({ kept: 1, total: 1 });
  });

  it("a branch summary carries its retention report, on the entry and in the reply, after repair", async () => {
    const u1 = await f.append(user("fix the login bug"));
    const other = await f.append(user("try memcached instead"));
    await f.append(assistant("on it"), u1.id);
    await f.append(user("try redis for the sessions, but never store tokens in plain text"));
    await f.append(assistant("redis works", [{ name: "write", path: "src/cache.ts" }]));

    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: other.id, summarize: true });

    const summary = result.summaryEntry as Extract<SessionEntry, { type: "branch_summary" }>;
    expect(summary.summary).toContain(
      "\n## Critical Context\n- User constraint: try redis for the sessions, but never store tokens in plain text",
    );
    expect(result.retention).toMatchObject({
      files: { kept: 1, total: 1 },
      constraints: { kept: 1, total: 1 },
      // The request is the constraint's sentence: the repaired line keeps it too.
      requests: { kept: 1, total: 1 },
      repaired: { files: 0, errors: 0, constraints: 1 },
    });
    expect(result.retention!.missing.requests).toEqual([]);
    expect((summary.details as { retention?: unknown }).retention).toEqual(result.retention);
  });

  it("with summary.repair off, a branch summary is stored as written and its report shows the loss", async () => {
    f.settings.summary.repair = false;
    const u1 = await f.append(user("fix the login bug"));
    const other = await f.append(user("try memcached instead"));
    await f.append(user("try redis, but never store tokens in plain text"), u1.id);

    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: other.id, summarize: true });

    expect((result.summaryEntry as { summary: string }).summary).not.toContain("User constraint");
    expect(result.retention!.constraints).toEqual({ kept: 0, total: 1 });
    expect(result.retention!.repaired).toBeUndefined();
  });

  it("gives plugins the preparation even without a summary, with the session's project and settings", async () => {
    const s = await branchedSession(f);
    hooks.answer = { summary: { summary: "ignored: no summary asked" }, pluginId: "p@1" };
    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a4.id, summarize: false, label: "memcached" });

    expect(hooks.events).toHaveLength(1);
    const { event, context } = hooks.events[0]!;
    expect(event.preparation).toEqual({
      targetId: s.a4.id,
      oldLeafId: s.a3.id,
      commonAncestorId: s.a2.id,
      entriesToSummarize: [s.u2, s.a3],
      userWantsSummary: false,
      label: "memcached",
    });
    expect(context).toMatchObject({ sessionId: f.sessionId, projectDir: "/projects/app", settings: f.settings });
    expect(result.summaryEntry).toBeUndefined();
    expect(f.store.label(f.sessionId, s.a4.id)).toBe("memcached");
  });

  it("stops when a plugin cancels: nothing written, the leaf stays", async () => {
    const s = await branchedSession(f);
    hooks.answer = { cancel: true, pluginId: "guard@1" };
    const before = f.store.requireSession(f.sessionId).entryCount;
    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.u3.id, summarize: true, label: "x" });

    expect(result).toMatchObject({ status: "cancelled", leafId: s.a3.id, pluginId: "guard@1" });
    expect(f.leaf()).toBe(s.a3.id);
    expect(f.store.requireSession(f.sessionId).entryCount).toBe(before);
    expect(f.summarizer.requests).toHaveLength(0);
  });

  it("writes a plugin's summary with fromHook and its details, repaired and with its retention report, without asking the model", async () => {
    const s = await branchedSession(f);
    hooks.answer = { summary: { summary: "custom", details: { mine: 1 } }, pluginId: "sum@2" };
    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a4.id, summarize: true });

    expect(result.pluginId).toBe("sum@2");
    expect(result.summaryEntry).toMatchObject({
      type: "branch_summary",
      summary: "custom\n\n## Critical Context\n- File modified: `src/cache.ts`",
      fromHook: true,
      details: { mine: 1, retention: { files: { kept: 1, total: 1 }, repaired: { files: 1, errors: 0, constraints: 0 } } },
      parentId: s.a4.id,
    });
    expect(result.retention?.files).toEqual({ kept: 1, total: 1 });
    expect(f.summarizer.requests).toHaveLength(0);
  });

  it("does not inherit file lists from plugin-made summaries in a later navigation", async () => {
    const s = await branchedSession(f);
    hooks.answer = { summary: { summary: "custom", details: { readFiles: ["plugin.ts"], modifiedFiles: [] } }, pluginId: "sum@2" };
    await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a4.id, summarize: true });
    hooks.answer = undefined;
    const back = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a3.id, summarize: true });
    // Left behind: u3, a4 and the plugin's summary; only the daemon's own lists carry over.
    expect(back.summaryEntry).toMatchObject({ details: { readFiles: [], modifiedFiles: [] } });
  });

  it("puts a label on the summary entry when summarizing, on the target otherwise", async () => {
    const s = await branchedSession(f);
    const summarized = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a4.id, summarize: true, label: "left redis" });
    const summaryId = summarized.summaryEntry!.id;
    expect(f.store.label(f.sessionId, summaryId)).toBe("left redis");
    expect(f.store.label(f.sessionId, s.a4.id)).toBeUndefined();
    // The label entry follows the summary (one transaction) and is the leaf now.
    const labelEntry = f.store.getEntry(f.sessionId, summarized.leafId!)!.entry;
    expect(labelEntry).toMatchObject({ type: "label", targetId: summaryId, parentId: summaryId });

    const plain = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a1.id, summarize: false, label: "start" });
    expect(f.store.label(f.sessionId, s.a1.id)).toBe("start");
    expect(f.store.getEntry(f.sessionId, plain.leafId!)!.entry).toMatchObject({ type: "label", parentId: s.a1.id });
  });

  it("is a no-op on the current leaf", async () => {
    const s = await branchedSession(f);
    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a3.id, summarize: true, label: "x" });
    expect(result).toEqual({ status: "unchanged", leafId: s.a3.id });
    expect(hooks.events).toHaveLength(0);
    expect(f.store.label(f.sessionId, s.a3.id)).toBeUndefined();
  });

  it("moves before the root for the root user message: the summary becomes a new root", async () => {
    const s = await branchedSession(f);
    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.u1.id, summarize: true });
    expect(result.editorText).toBe("fix the login bug");
    expect(result.summaryEntry).toMatchObject({ parentId: null, fromId: s.a3.id });
    expect(f.summarizer.requests[0]!.messages).toHaveLength(4); // a1, a2, u2, a3 (tool result skipped)

    const bare = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.u1.id, summarize: false });
    expect(bare).toMatchObject({ status: "moved", leafId: null, editorText: "fix the login bug" });
    expect(f.leaf()).toBeNull();
  });

  it("writes nothing when the leaf moves while the summary is being written (stale)", async () => {
    const s = await branchedSession(f);
    f.summarizer.during = async () => {
      await f.append(user("typed meanwhile"));
    };
    const before = f.store.requireSession(f.sessionId).entryCount;
    const result = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.u3.id, summarize: true, requestId: "r1" });

    expect(result.status).toBe("stale");
    expect(result.message).toMatch(/nothing was written/);
    expect(f.store.requireSession(f.sessionId).entryCount).toBe(before + 1);
    expect(f.store.getEntry(f.sessionId, f.leaf()!)!.entry).toMatchObject({ parentId: s.a3.id });
  });

  it("writes nothing when cancelled mid-summary", async () => {
    const s = await branchedSession(f);
    f.summarizer.hold();
    const controller = new AbortController();
    const before = f.store.requireSession(f.sessionId).entryCount;
    const navigation = f.tree.navigate({ sessionId: f.sessionId, targetId: s.u3.id, summarize: true }, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(f.summarizer.requests).toHaveLength(1);
    controller.abort(new CancelledError());

    await expect(navigation).rejects.toBeInstanceOf(CancelledError);
    expect(f.leaf()).toBe(s.a3.id);
    expect(f.store.requireSession(f.sessionId).entryCount).toBe(before);
  });

  it("refuses a second long operation on the same session with session_busy", async () => {
    const s = await branchedSession(f);
    const release = f.locks.acquire(f.sessionId, "compaction");
    const error = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.u3.id, summarize: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("session_busy");
    release();
    await expect(f.tree.navigate({ sessionId: f.sessionId, targetId: s.u3.id, summarize: false })).resolves.toMatchObject({
      status: "moved",
    });
  });

  it("returns the first result for a retried requestId without summarizing again", async () => {
    const s = await branchedSession(f);
    const first = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.u3.id, summarize: true, requestId: "nav-1" });
    const again = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a1.id, summarize: true, requestId: "nav-1" });
    expect(again).toEqual(first);
    expect(f.summarizer.requests).toHaveLength(1);

    const moveOnly = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a1.id, summarize: false, requestId: "nav-2" });
    await f.append(user("later"));
    expect(await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a1.id, summarize: false, requestId: "nav-2" })).toEqual(moveOnly);
  });

  it("reports unknown targets and sessions", async () => {
    await branchedSession(f);
    await expect(f.tree.navigate({ sessionId: f.sessionId, targetId: "nope", summarize: false })).rejects.toMatchObject({
      code: "entry_not_found",
    });
    await expect(f.tree.navigate({ sessionId: "ghost", targetId: "nope", summarize: false })).rejects.toMatchObject({
      code: "session_not_found",
    });
  });

  it("moves without a summary when the target lies ahead of the leaf", async () => {
    const s = await branchedSession(f);
    await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a2.id, summarize: false });
    const ahead = await f.tree.navigate({ sessionId: f.sessionId, targetId: s.a4.id, summarize: true });
    expect(ahead).toEqual({ status: "moved", leafId: s.a4.id });
    expect(f.summarizer.requests).toHaveLength(0);
    expect(ids(hooks.events[1]!.event.preparation.entriesToSummarize)).toEqual([]);
  });

  it("reports progress from begin to end", async () => {
    const s = await branchedSession(f);
    const values: unknown[] = [];
    await f.tree.navigate({ sessionId: f.sessionId, targetId: s.u3.id, summarize: true }, { progress: (value) => values.push(value) });
    expect(values).toEqual([
      { kind: "begin", title: "Navigating the session tree" },
      { kind: "report", message: "Running session_before_tree plugins" },
      { kind: "report", message: "Summarizing 2 messages with test:recorder, then extractive" },
      { kind: "end", message: "moved" },
    ]);
  });
});
