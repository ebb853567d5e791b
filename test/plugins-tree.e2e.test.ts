/**
 * `session_before_tree` through the real daemon (docs/design.md#tree-navigation, #hooks-and-ordering): a plugin can write the
 * summary of the branch being left, or cancel the navigation (the session is then untouched);
 * a failing one is reported and the daemon summarizes as usual.
 */
import { SessionCreate, SessionGet, TreeNavigate, type BranchSummaryEntry, type SessionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { appendAll, assistant, user } from "./fixtures/e2e.js";
import { hookPlugin, usePluginDaemons } from "./support/plugins.js";
import { waitFor } from "./support/wait.js";

const daemons = usePluginDaemons();

async function daemonWithTreeHook(tree: string) {
  const setup = await daemons.start({ plugins: { brancher: hookPlugin({ tree }) } });
  const { session } = await setup.client.request(SessionCreate, { cwd: setup.project });
  const entries = await appendAll(setup.client, session.id, [
    user("Try Redis for the cache."),
    assistant("Redis is set up."),
    user("Actually, measure the in-memory cache first."),
    assistant("In-memory is 3x faster for our sizes."),
  ]);
  return { ...setup, sessionId: session.id, entries };
}

/** The user goes back to the first answer: the last question and its answer are left behind. */
function backToFirstAnswer(sessionId: string, entries: SessionEntry[], summarize: boolean) {
  return { sessionId, targetId: entries[1]!.id, summarize };
}

describe("session_before_tree", () => {
  it("writes the plugin's branch summary (fromHook, its details) and sees what is being left", async () => {
    const { client, sessionId, entries } = await daemonWithTreeHook(`
const p = event.preparation;
return { summary: { summary: "Left: " + p.entriesToSummarize.map((e) => e.id).join(","), details: { by: "brancher", target: p.targetId, from: p.oldLeafId, wanted: p.userWantsSummary } } };`);

    const result = await client.request(TreeNavigate, backToFirstAnswer(sessionId, entries, true));

    expect(result).toMatchObject({ status: "moved", leafId: result.summaryEntry?.id });
    const summary = result.summaryEntry as BranchSummaryEntry;
    expect(summary).toMatchObject({
      type: "branch_summary",
      parentId: entries[1]!.id,
      fromId: entries[3]!.id,
      fromHook: true,
      summary: `Left: ${entries[2]!.id},${entries[3]!.id}`,
      details: { by: "brancher", target: entries[1]!.id, from: entries[3]!.id, wanted: true },
    });
  });

  it("cancels the navigation: status cancelled, the leaf and the entries untouched", async () => {
    const { client, sessionId, entries } = await daemonWithTreeHook("return { cancel: true };");

    const result = await client.request(TreeNavigate, backToFirstAnswer(sessionId, entries, true));

    expect(result.status).toBe("cancelled");
    const session = await client.request(SessionGet, { sessionId });
    expect(session).toMatchObject({ leafId: entries[3]!.id, entryCount: 4 });
  });

  it("runs on navigations without a summary too, where a cancel still counts", async () => {
    const { client, sessionId, entries } = await daemonWithTreeHook(
      "return event.preparation.userWantsSummary ? undefined : { cancel: true };",
    );

    expect((await client.request(TreeNavigate, backToFirstAnswer(sessionId, entries, false))).status).toBe("cancelled");
    expect((await client.request(SessionGet, { sessionId })).leafId).toBe(entries[3]!.id);
  });

  it("reports a throwing hook and summarizes the branch with the daemon's own summarizer", async () => {
    const { client, sessionId, entries, news } = await daemonWithTreeHook('throw new Error("no summary for you");');

    const result = await client.request(TreeNavigate, backToFirstAnswer(sessionId, entries, true));

    expect(result.status).toBe("moved");
    expect(result.summaryEntry).toMatchObject({ type: "branch_summary", fromId: entries[3]!.id });
    expect((result.summaryEntry as BranchSummaryEntry).fromHook).toBeUndefined();
    const error = await waitFor(() => news.errors[0], { message: "plugins/didError" });
    expect(error).toMatchObject({ pluginId: "global:brancher", hook: "session_before_tree", kind: "exception" });
    expect(error.message).toContain("no summary for you");
  });
});
