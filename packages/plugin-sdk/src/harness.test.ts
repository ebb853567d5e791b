import { describe, expect, it } from "vitest";
import { definePlugin, PluginHookError, runHook, sessionFixture, testSettings } from "./index.js";

function fixture() {
  return sessionFixture()
    .user("Fix the login bug", { id: "u1" })
    .assistant("Reading the auth module", { id: "a1", toolCalls: [{ name: "read", arguments: { path: "src/auth.ts" } }] })
    .toolResult("export function login() {}", { id: "t1" })
    .assistant("Found it", { id: "a2" })
    .user("Now add a test", { id: "u2" })
    .assistant("Added test/auth.test.ts", {
      id: "a3",
      toolCalls: [{ name: "write", arguments: { path: "test/auth.test.ts", content: "..." } }],
    })
    .toolResult("ok", { id: "t2" });
}

const summarizer = definePlugin({
  name: "summarizer",
  apiVersion: 1,
  hooks: {
    async session_before_compact(event, ctx) {
      const tokens = await ctx.countTokens("abcdefgh");
      const { text } = await ctx.complete({ prompt: "summarize", maxTokens: 100 });
      ctx.log("info", `tokens=${tokens}`);
      return {
        compaction: {
          summary: text,
          firstKeptEntryId: event.preparation.firstKeptEntryId,
          tokensBefore: event.preparation.tokensBefore,
          details: { n: event.preparation.messagesToSummarize.length },
        },
      };
    },
  },
});

describe("the session fixture", () => {
  it("builds the compaction event with the daemon's own preparation (cut at the last user message)", () => {
    const event = fixture().compactEvent({ customInstructions: "focus on tests" });
    expect(event.preparation.firstKeptEntryId).toBe("u2");
    expect(event.preparation.summarizeEntryIds).toEqual(["u1", "a1", "t1", "a2"]);
    expect(event.preparation.isSplitTurn).toBe(false);
    expect(event.preparation.fileOps).toEqual({ readFiles: ["src/auth.ts"], modifiedFiles: [] });
    expect(event.branchEntries.map((entry) => entry.id)).toEqual(["u1", "a1", "t1", "a2", "u2", "a3", "t2"]);
    expect(event.customInstructions).toBe("focus on tests");
  });

  it("builds the tree event for navigating back to an earlier entry", () => {
    const session = fixture();
    const event = session.treeEvent("a2");
    expect(event.preparation).toMatchObject({ targetId: "a2", oldLeafId: "t2", commonAncestorId: "a2", userWantsSummary: true });
    expect(event.preparation.entriesToSummarize.map((entry) => entry.id)).toEqual(["u2", "a3", "t2"]);
    session.branchFrom("a2").user("a different idea", { id: "u3" });
    expect(session.entries.map((entry) => entry.id)).toEqual(["u1", "a1", "t1", "a2", "u3"]);
  });
});

describe("runHook (harness)", () => {
  it("runs a hook with stub services and returns what the daemon would make of the result", async () => {
    const requests: unknown[] = [];
    const result = await runHook(summarizer, "session_before_compact", fixture().compactEvent(), {
      complete: (request) => {
        requests.push(request);
        return { text: "a summary" };
      },
      countTokens: (text) => text.length,
    });
    expect(result).toMatchObject({ kind: "result", value: { summary: "a summary", firstKeptEntryId: "u2", details: { n: 4 } } });
    expect(result.logs).toEqual([{ level: "info", message: "tokens=8" }]);
    expect(requests).toEqual([{ prompt: "summarize", maxTokens: 100 }]);
  });

  it("rejects what the daemon rejects: a firstKeptEntryId outside the range, an unknown key, non-JSON values", async () => {
    const returning = (value: unknown) =>
      definePlugin({ name: "x", apiVersion: 1, hooks: { session_before_compact: () => value as never } });
    const event = fixture().compactEvent();
    await expect(
      runHook(returning({ compaction: { summary: "s", firstKeptEntryId: "nope", tokensBefore: 1 } }), "session_before_compact", event),
    ).rejects.toMatchObject({
      kind: "invalid-result",
      message: expect.stringContaining('"nope" is not an entry of the prepared range'),
    });
    await expect(runHook(returning({ cancle: true }), "session_before_compact", event)).rejects.toBeInstanceOf(PluginHookError);
    await expect(
      runHook(returning({ compaction: { summary: "s", firstKeptEntryId: "u2", tokensBefore: 1n } }), "session_before_compact", event),
    ).rejects.toThrow("not plain JSON");
    // Kept entries after the first kept one are fine.
    expect(
      (
        await runHook(
          returning({ compaction: { summary: "s", firstKeptEntryId: "a3", tokensBefore: null } }),
          "session_before_compact",
          event,
        )
      ).kind,
    ).toBe("result");
    expect((await runHook(returning({ cancel: true }), "session_before_compact", event)).kind).toBe("cancel");
    expect((await runHook(returning(undefined), "session_before_compact", event)).kind).toBe("none");
  });

  it("times out a slow hook and aborts its signal", async () => {
    let reason: unknown;
    const slow = definePlugin({
      name: "slow",
      apiVersion: 1,
      hooks: {
        session_before_tree: (_event, ctx) =>
          new Promise(() => {
            ctx.signal.addEventListener("abort", () => (reason = ctx.signal.reason));
          }),
      },
    });
    await expect(runHook(slow, "session_before_tree", fixture().treeEvent("a2"), { timeoutMs: 50 })).rejects.toMatchObject({
      kind: "timeout",
    });
    expect((reason as DOMException).name).toBe("TimeoutError");
  });

  it("aborts ctx.signal when the test cancels", async () => {
    const controller = new AbortController();
    const waiting = definePlugin({
      name: "waiting",
      apiVersion: 1,
      hooks: {
        session_before_tree: (_event, ctx) =>
          new Promise((resolve) =>
            ctx.signal.addEventListener("abort", () => resolve({ summary: { summary: `stopped: ${ctx.signal.reason.name}` } })),
          ),
      },
    });
    const run = runHook(waiting, "session_before_tree", fixture().treeEvent("a2"), { signal: controller.signal });
    controller.abort();
    expect(await run).toMatchObject({ kind: "result", value: { summary: "stopped: AbortError" } });
  });

  it("checks the plugin and the event like the daemon does", async () => {
    await expect(
      runHook({ name: "old", apiVersion: 0, hooks: {} }, "session_before_tree", fixture().treeEvent("a2")),
    ).rejects.toMatchObject({ kind: "activation" });
    await expect(runHook(summarizer, "session_before_compact", { preparation: {}, branchEntries: [] } as never)).rejects.toMatchObject({
      kind: "invalid-event",
    });
    await expect(runHook(summarizer, "session_before_compact", fixture().compactEvent())).rejects.toThrow(
      "runHook got no `complete` option",
    );
  });

  it("passes settings as ctx.settings", async () => {
    const reader = definePlugin({
      name: "reader",
      apiVersion: 1,
      hooks: { session_before_tree: (_event, ctx) => ({ summary: { summary: String(ctx.settings.branchSummary.reserveTokens) } }) },
    });
    const result = await runHook(reader, "session_before_tree", fixture().treeEvent("a2"), {
      settings: testSettings({ branchSummary: { reserveTokens: 99 } }),
    });
    expect(result.kind === "result" && result.value.summary).toBe("99");
  });
});
