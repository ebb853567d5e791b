import { runHook, sessionFixture, type PluginCompleteRequest } from "@base-context/plugin-sdk";
import { describe, expect, it } from "vitest";
import plugin from "./index.js";
import type { Ledger } from "./ledger.js";

function firstSession() {
  return sessionFixture()
    .user("Add rate limiting to the API. We'll use a token bucket, not a fixed window.", { id: "u1" })
    .assistant("Reading the router", { id: "a1", toolCalls: [{ name: "read", arguments: { path: "src/router.ts" } }] })
    .toolResult("export const router = …", { id: "t1" })
    .assistant("Decided to put the limiter in middleware.", {
      id: "a2",
      toolCalls: [{ name: "write", arguments: { path: "src/limiter.ts", content: "…" } }],
    })
    .toolResult("ok", { id: "t2" })
    .user("Now the tests", { id: "u2" })
    .assistant("On it", { id: "a3" });
}

describe("decisions-artifacts", () => {
  it("writes a narrative with the daemon's prompt plus the ledger, and keeps the ledger in details", async () => {
    const requests: PluginCompleteRequest[] = [];
    const result = await runHook(plugin, "session_before_compact", firstSession().compactEvent(), {
      complete: (request) => {
        requests.push(request);
        return { text: "## Goal\nRate limiting." };
      },
    });
    expect(result.kind).toBe("result");
    if (result.kind !== "result") return;
    expect(requests[0]!.prompt).toContain("<conversation>");
    expect(result.value.summary).toContain("## Goal\nRate limiting.");
    expect(result.value.summary).toContain("- We'll use a token bucket, not a fixed window.");
    expect(result.value.summary).toContain("- `src/limiter.ts` — written");
    const ledger = result.value.details as Ledger;
    expect(ledger.compactions).toBe(1);
    expect(Object.keys(ledger.artifacts).sort()).toEqual(["src/limiter.ts", "src/router.ts"]);
    expect(ledger.decisions.map((decision) => decision.entryId)).toEqual(["u1", "a2"]);
  });

  it("carries the artifact index over from the previous compaction it made", async () => {
    const first = await runHook(plugin, "session_before_compact", firstSession().compactEvent(), { complete: () => ({ text: "first" }) });
    if (first.kind !== "result") throw new Error("expected a result");

    const session = firstSession()
      .compaction({
        summary: first.value.summary,
        firstKeptEntryId: first.value.firstKeptEntryId,
        details: first.value.details,
        fromHook: true,
      })
      .assistant("Testing the limiter", {
        id: "a4",
        toolCalls: [{ name: "edit", arguments: { path: "src/limiter.ts", oldText: "a", newText: "b" } }],
      })
      .toolResult("ok", { id: "t4" })
      .assistant("Going with 100 requests per minute by default.", { id: "a5" })
      .user("Ship it", { id: "u3" })
      .assistant("Shipped", { id: "a6" });
    const second = await runHook(plugin, "session_before_compact", session.compactEvent(), { complete: () => ({ text: "second" }) });
    if (second.kind !== "result") throw new Error("expected a result");

    const ledger = second.value.details as Ledger;
    expect(ledger.compactions).toBe(2);
    // From the first compaction (not in this range any more) and from this one:
    expect(ledger.artifacts["src/router.ts"]!.operations).toEqual(["read"]);
    expect(ledger.artifacts["src/limiter.ts"]).toMatchObject({ operations: ["written", "edited"], firstEntryId: "a2", lastEntryId: "a4" });
    expect(ledger.decisions.map((decision) => decision.text)).toEqual([
      "We'll use a token bucket, not a fixed window.",
      "Decided to put the limiter in middleware.",
      "Going with 100 requests per minute by default.",
    ]);
  });

  it("still summarizes, from the ledger alone, when the daemon has no model", async () => {
    const result = await runHook(plugin, "session_before_compact", firstSession().compactEvent(), {
      complete: () => {
        throw new Error("this daemon offers no model to plugins");
      },
    });
    expect(result.kind === "result" && result.value.summary).toContain("No model was available");
    expect(result.logs[0]).toMatchObject({ level: "warn" });
  });
});
