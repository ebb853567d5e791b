/**
 * The prune rung through the compaction service and turn/end: what is written, what the context
 * shows afterwards, and that `compaction.prune.enabled: false` changes nothing.
 */
import type { AssistantMessage, CompactionEntry, PruneEntry } from "@base-context/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildContext, prepareCompaction } from "@base-context/core";
import { assistant, harness, toolResult, user, type Harness } from "./test-support.js";
import { TurnEndService } from "./turn-end.js";

let h: Harness;
beforeEach(async () => {
  h = await harness();
  // FakeCounter: JSON chars / 4. A user/assistant pair is ~500 tokens; `dump(n)` about n tokens.
  h.settings.compaction.prune = { enabled: true, protectTokens: 1_500, minTokens: 400, minSavings: 500 };
});
afterEach(async () => {
  await h.cleanup();
});

const dump = (tokens: number) => "x".repeat(tokens * 4);
const manual = (extra: Record<string, unknown> = {}) => ({ sessionId: h.sessionId, reason: "manual" as const, ...extra });
const context = async (leafId?: string) => {
  const path = await h.sessions.getContextPath(h.sessionId, leafId);
  return buildContext({ path: path.entries });
};
const leaf = () => h.store.requireSession(h.sessionId).leafId!;

/** A tool call reading `path` whose result is about `tokens` tokens, then the model's answer. */
async function readFile(path: string, tokens: number, id = path): Promise<string> {
  await h.append(assistant(`reading ${path}`, { id, name: "read", path }));
  const resultId = await h.append(toolResult(id, "read", dump(tokens)));
  await h.append(assistant(`read ${path}`));
  return resultId;
}

describe("compaction/run strategy prune", () => {
  it("hides old large outputs without a model call; the stored entries stay whole", async () => {
    await h.append(user("look at the code"));
    const old = await readFile("src/big.ts", 3_000);
    await h.conversation(4);
    const before = await context();

    const result = await h.service.run(manual({ strategy: "prune" }));

    expect(result).toMatchObject({ status: "committed", rung: "prune", entry: { type: "prune" } });
    expect(h.summarizer.requests).toHaveLength(0);
    const entry = result.entry as PruneEntry;
    expect(entry.hidden).toEqual([expect.objectContaining({ entryId: old, toolName: "read", args: "src/big.ts" })]);
    expect(result.pruned).toEqual({ entryId: entry.id, outputs: 1, tokensSaved: entry.tokensSaved });
    expect(result.stats).toMatchObject({ tokensSaved: entry.tokensSaved });
    expect(result.message).toContain("no model call");
    const after = await context();
    expect(after.tokens).toBe(before.tokens - entry.tokensSaved);
    expect(JSON.stringify(after.messages)).toContain("[output of read src/big.ts pruned:");
    const stored = h.store.getEntry(h.sessionId, old)!.entry;
    expect(stored.type === "message" && stored.message.role === "toolResult" && stored.message.content[0]).toMatchObject({
      text: dump(3_000),
    });
    // compaction/status says which rung ran and what it saved.
    expect(h.service.status({ sessionId: h.sessionId }).jobs[0]).toMatchObject({
      state: "committed",
      result: { rung: "prune", pruned: result.pruned },
    });
  });

  it("a later summary still reads the pruned output in full and lists the pruned read among the files", async () => {
    await h.append(user("look at the code"));
    await readFile("src/big.ts", 3_000);
    await h.conversation(4);
    await h.service.run(manual({ strategy: "prune" }));
    await h.conversation(2, "later");

    const result = await h.service.run(manual({ strategy: "summarize" }));

    expect(result).toMatchObject({ status: "committed", rung: "summarize" });
    const entry = result.entry as CompactionEntry;
    expect(entry.details).toMatchObject({ readFiles: ["src/big.ts"] });
    expect(JSON.stringify(h.summarizer.requests[0]!.messages)).toContain(dump(3_000));
  });

  it("pruning twice hides nothing twice", async () => {
    await h.append(user("look"));
    await readFile("a.ts", 3_000);
    await h.conversation(4);
    const first = await h.service.run(manual({ strategy: "prune" }));
    expect(first.status).toBe("committed");
    const second = await h.service.run(manual({ strategy: "prune" }));
    expect(second).toMatchObject({ status: "nothing_to_compact", rung: "prune" });
    expect(second.message).toContain("nothing to prune");
    expect(h.store.path(h.sessionId, leaf()).filter((stored) => stored.entry.type === "prune")).toHaveLength(1);
  });

  it("a branch navigated away from keeps its own prune state", async () => {
    await h.append(user("look"));
    const big = await readFile("a.ts", 3_000);
    const forkPoint = (await h.conversation(4)).at(-1)!;
    await h.service.run(manual({ strategy: "prune" }));
    const prunedLeaf = leaf();
    expect((await context()).prunedEntryIds).toEqual([big]);

    // Another branch from before the prune: the output is shown in full there.
    await h.sessions.branch({ sessionId: h.sessionId, entryId: forkPoint });
    await h.append(user("another idea"));
    expect((await context()).prunedEntryIds).toEqual([]);
    expect(JSON.stringify((await context()).messages)).toContain(dump(3_000));
    // And back: the pruned branch still shows the stub.
    expect((await context(prunedLeaf)).prunedEntryIds).toEqual([big]);
  });
});

describe("the summarize rung prunes the kept tail in the same step", () => {
  /** Older conversation, then the user's last messages around one large listing. */
  async function dumpAtTheEnd(): Promise<{ lastUsers: string[]; listing: string }> {
    await h.conversation(6, "old");
    const lastUsers = [await h.append(user("where is the config loaded?"))];
    await h.append(assistant("listing", { id: "find", name: "bash", path: "." }));
    const listing = await h.append(toolResult("find", "bash", dump(2_500)));
    await h.append(assistant("it is in src/config.ts"));
    lastUsers.push(await h.append(user("and where is it validated?")));
    await h.append(assistant("in src/validate.ts"));
    return { lastUsers, listing };
  }

  it("keeps the user's last messages after auto, with the listing as a stub; the summarizer saw no stub", async () => {
    const { lastUsers, listing } = await dumpAtTheEnd();
    // Enough for the last two exchanges, not for the listing in full.
    h.settings.compaction.keepRecentTokens = 1_800;
    const path0 = await h.sessions.getContextPath(h.sessionId);
    const unpruned = prepareCompaction(path0.entries, h.settings.compaction);
    if (!("preparation" in unpruned)) throw new Error("expected a preparation");
    const ids0 = path0.entries.map((item) => item.entry.id);
    // Without pruning the listing fills the kept tail and the first of the user's last messages is summarized.
    expect(ids0.indexOf(unpruned.preparation.firstKeptEntryId)).toBeGreaterThan(ids0.indexOf(lastUsers[0]!));

    const result = await h.service.run(manual());

    expect(result).toMatchObject({ status: "committed", rung: "summarize", entry: { type: "compaction" } });
    const compaction = result.entry as CompactionEntry;
    const path = h.store.path(h.sessionId, leaf()).map((stored) => stored.entry);
    const kept = path.slice(path.findIndex((entry) => entry.id === compaction.firstKeptEntryId)).map((entry) => entry.id);
    expect(kept).toEqual(expect.arrayContaining([...lastUsers, listing]));
    const prune = path.find((entry): entry is PruneEntry => entry.type === "prune")!;
    expect(prune.hidden.map((item) => item.entryId)).toEqual([listing]);
    expect(result.pruned).toEqual({ entryId: prune.id, outputs: 1, tokensSaved: prune.tokensSaved });
    expect(result.stats!.tokensSaved).toBe(result.stats!.tokensBefore! - result.stats!.tokensAfter!);
    expect(result.stats!.tokensAfter).toBeLessThan(h.settings.compaction.keepRecentTokens + 200);
    expect(leaf()).toBe(compaction.id);
    // Both entries have their counts stored before the reply (the path cache keeps only counted paths).
    expect(h.store.getEntry(h.sessionId, prune.id)!.tokens).not.toBeNull();
    const built = await context();
    expect(built.prunedEntryIds).toEqual([listing]);
    expect(JSON.stringify(h.summarizer.requests.map((request) => request.messages))).not.toContain("pruned:");
  });

  it("with compaction.prune.enabled false the cut is the old one and nothing is pruned", async () => {
    await dumpAtTheEnd();
    h.settings.compaction.keepRecentTokens = 1_800;
    h.settings.compaction.prune.enabled = false;
    const path = await h.sessions.getContextPath(h.sessionId);
    const old = prepareCompaction(path.entries, h.settings.compaction);
    if (!("preparation" in old)) throw new Error("expected a preparation");

    expect(await h.service.prepare(h.sessionId)).toEqual(old);
    const result = await h.service.run(manual());
    expect(result.rung).toBe("summarize");
    expect(result.pruned).toBeUndefined();
    expect((result.entry as CompactionEntry).firstKeptEntryId).toBe(old.preparation.firstKeptEntryId);
    expect(h.store.path(h.sessionId, leaf()).some((stored) => stored.entry.type === "prune")).toBe(false);
  });
});

describe("turn/end chooses the rung", () => {
  const WINDOW = 10_000; // threshold 9 000 with the harness's reserveTokens 1 000
  const replyWithUsage = (input: number): AssistantMessage => ({
    role: "assistant",
    content: [{ type: "text", text: "done" }],
    provider: "openai",
    model: "gpt-4.1",
    stopReason: "stop",
    timestamp: Date.now() + 60_000,
    usage: { input, output: 0, cacheRead: 0, cacheWrite: 0 },
  });
  const turns = () => new TurnEndService({ sessions: h.sessions, compaction: h.service, settings: { forSession: () => h.settings } });

  it("prunes without a model call when pruning alone brings the context minSavings under the threshold", async () => {
    await h.append(user("look"));
    await readFile("a.ts", 3_000);
    await h.conversation(4);
    const answer = await turns().end({ sessionId: h.sessionId, contextWindow: WINDOW, assistant: replyWithUsage(9_500) });
    expect(answer.checkpoint).toMatchObject({ status: "committed", rung: "prune", entry: { type: "prune" } });
    expect(answer.message).toMatch(/pruned 1 old tool output \(\d+ tokens\), no model call/);
    expect(h.summarizer.requests).toHaveLength(0);
  });

  it("summarizes when pruning alone would not be enough", async () => {
    await h.append(user("look"));
    await readFile("a.ts", 700); // saves ~700: 9 500 − 700 is not 500 under 9 000
    await h.conversation(4);
    const answer = await turns().end({ sessionId: h.sessionId, contextWindow: WINDOW, assistant: replyWithUsage(9_500) });
    expect(answer.checkpoint).toMatchObject({ status: "committed", rung: "summarize", entry: { type: "compaction" } });
    expect(h.summarizer.requests.length).toBeGreaterThan(0);
  });

  it("with compaction.prune.enabled false always summarizes, as before", async () => {
    h.settings.compaction.prune.enabled = false;
    await h.append(user("look"));
    await readFile("a.ts", 3_000);
    await h.conversation(4);
    const answer = await turns().end({ sessionId: h.sessionId, contextWindow: WINDOW, assistant: replyWithUsage(9_500) });
    expect(answer.checkpoint).toMatchObject({ status: "committed", rung: "summarize", entry: { type: "compaction" } });
    expect(answer.checkpoint?.pruned).toBeUndefined();
  });
});
