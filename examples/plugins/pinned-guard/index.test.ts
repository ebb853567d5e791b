import { runHook, sessionFixture } from "@base-context/plugin-sdk";
import { afterEach, describe, expect, it } from "vitest";
import plugin from "./index.js";

function conversation() {
  return sessionFixture()
    .user("Use Postgres 16, never SQLite", { id: "u1" })
    .assistant("Noted", { id: "a1" })
    .user("Now write the migration", { id: "u2" })
    .assistant("Done", { id: "a2" });
}

afterEach(() => {
  delete process.env.PINNED_GUARD_LABEL;
});

describe("pinned-guard", () => {
  it("cancels a compaction that would summarize a pinned entry", async () => {
    const session = conversation().label("pinned", "u1");
    const result = await runHook(plugin, "session_before_compact", session.compactEvent());
    expect(result.kind).toBe("cancel");
    expect(result.logs[0]!.message).toContain("pinned u1 would be summarized");
  });

  it("lets the compaction happen when the pin was cleared, or when the pinned entry is kept", async () => {
    const cleared = conversation().label("pinned", "u1").label(undefined, "u1");
    expect((await runHook(plugin, "session_before_compact", cleared.compactEvent())).kind).toBe("none");
    const event = conversation().label("Pinned ", "u2").compactEvent();
    expect(event.preparation.summarizeEntryIds).not.toContain("u2");
    expect((await runHook(plugin, "session_before_compact", event)).kind).toBe("none");
  });

  it("follows PINNED_GUARD_LABEL", async () => {
    process.env.PINNED_GUARD_LABEL = "keep";
    expect((await runHook(plugin, "session_before_compact", conversation().label("pinned", "u1").compactEvent())).kind).toBe("none");
    expect((await runHook(plugin, "session_before_compact", conversation().label("keep", "u1").compactEvent())).kind).toBe("cancel");
  });

  it("cancels leaving a branch that holds a pinned entry, only when a summary was asked for", async () => {
    const session = conversation().label("pinned", "a2");
    expect((await runHook(plugin, "session_before_tree", session.treeEvent("u1"))).kind).toBe("cancel");
    expect((await runHook(plugin, "session_before_tree", session.treeEvent("u1", { userWantsSummary: false }))).kind).toBe("none");
    expect((await runHook(plugin, "session_before_tree", conversation().treeEvent("u1"))).kind).toBe("none");
  });
});
