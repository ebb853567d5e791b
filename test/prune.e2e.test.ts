/**
 * The prune rung end to end: `compaction/run { strategy: "prune" }` on the built daemon, the
 * context it leaves, the export pi 0.73 opens (its own SessionManager builds a context from it,
 * ignoring the prune entry), the import that gives the prune entry back, and the CLI
 * (`compact --strategy prune`, `show` marking pruned outputs).
 */
import {
  CompactionRun,
  CompactionStatusRequest,
  ContextBuild,
  SessionDelete,
  SessionExport,
  SessionImport,
  SessionPath,
  TurnEnd,
  type ContextMessage,
  type PruneEntry,
} from "@base-context/protocol";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appendAll, assistant, createSession, toolResult, user } from "./fixtures/e2e.js";
import { useDaemon } from "./support/daemon.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

/** Small limits, so a few KB of session exercise the rung. */
const SETTINGS = {
  compaction: { reserveTokens: 1_000, prune: { protectTokens: 1_500, minTokens: 300, minSavings: 1_000 } },
  summarizer: { provider: "extractive" },
};
const d = useDaemon({ settings: SETTINGS });
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const LISTING = Array.from({ length: 900 }, (_, i) => `./src/module-${i}/index.ts`).join("\n");

/** A user asks, the model lists the tree (a large output), then a longer conversation follows. */
async function sessionWithOldListing(): Promise<{ sessionId: string; listingId: string }> {
  const sessionId = await createSession(d.client, "/home/me/app");
  const entries = await appendAll(d.client, sessionId, [
    user("where is the router?"),
    assistant("", { toolCalls: [{ id: "call-find", name: "bash", arguments: { command: "find . -name '*.ts'" } }], stopReason: "toolUse" }),
    toolResult("call-find", "bash", LISTING),
    assistant("The router is in src/module-12/index.ts."),
    ...Array.from({ length: 8 }, (_, i) => [
      user(`question ${i}: ${"please explain the routing table in detail ".repeat(20)}`),
      assistant(`answer ${i}: ${"the table maps paths to handlers in order ".repeat(20)}`),
    ]).flat(),
  ]);
  return { sessionId, listingId: entries[2]!.id };
}

const textOf = (message: ContextMessage | undefined) =>
  message && "content" in message && Array.isArray(message.content)
    ? message.content.map((block) => ("text" in block ? block.text : "")).join("")
    : "";

describe("compaction/run with strategy prune", () => {
  it("hides the old listing behind a stub, reports the rung and the saving, and pi opens the export", async () => {
    const { sessionId, listingId } = await sessionWithOldListing();
    const before = await d.client.request(ContextBuild, { sessionId, format: "native" });

    const result = await d.client.request(CompactionRun, { sessionId, strategy: "prune" });
    expect(result).toMatchObject({ status: "committed", rung: "prune", entry: { type: "prune" } });
    const prune = result.entry as PruneEntry;
    expect(prune.hidden).toEqual([expect.objectContaining({ entryId: listingId, toolName: "bash", args: "find . -name '*.ts'" })]);
    expect(result.pruned).toEqual({ entryId: prune.id, outputs: 1, tokensSaved: prune.tokensSaved });
    const status = await d.client.request(CompactionStatusRequest, { sessionId });
    expect(status.jobs[0]).toMatchObject({ state: "committed", result: { rung: "prune", pruned: result.pruned } });

    const after = await d.client.request(ContextBuild, { sessionId, format: "native" });
    expect(after.tokens).toBe(before.tokens - prune.tokensSaved);
    expect(after.pruned).toEqual({ entryIds: [listingId], toolCallIds: ["call-find"], tokensSaved: prune.tokensSaved });
    const stub = after.messages.find((message) => message.role === "toolResult") as ContextMessage;
    expect(textOf(stub)).toMatch(/^\[output of bash find \. -name '\*\.ts' pruned: [\d,]+ tokens — call the tool again to see it\]$/);
    expect(after.messages).toHaveLength(before.messages.length);

    // Pruning again hides nothing twice.
    expect(await d.client.request(CompactionRun, { sessionId, strategy: "prune" })).toMatchObject({
      status: "nothing_to_compact",
      rung: "prune",
    });

    // The export carries the prune entry as a custom entry; pi 0.73 opens the file and builds a
    // context with the full listing (it ignores custom entries).
    const folder = dirs.make("bc-prune-export-");
    const file = join(folder, "session.jsonl");
    await d.client.request(SessionExport, { sessionId, format: "pi-jsonl", path: file });
    const lines = readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ type: "custom", id: prune.id, customType: "base-context.prune", data: { hidden: prune.hidden } });

    const piDir = join(folder, "pi-sessions");
    mkdirSync(piDir);
    const pi = SessionManager.open(file, piDir);
    expect(pi.getEntries().map((entry) => entry.type)).toContain("custom");
    const piContext = pi.buildSessionContext();
    expect(piContext.messages).toHaveLength(before.messages.length);
    const piToolResult = piContext.messages.find((message) => message.role === "toolResult");
    expect(JSON.stringify(piToolResult)).toContain("./src/module-899/index.ts");

    // Imported back, the custom entry is the prune entry again: the same context as before the export.
    await d.client.request(SessionDelete, { sessionId });
    await d.client.request(SessionImport, { format: "pi-jsonl", path: file });
    const path = await d.client.request(SessionPath, { sessionId });
    expect(path.entries.at(-1)).toEqual(prune);
    const reimported = await d.client.request(ContextBuild, { sessionId, format: "native" });
    expect(reimported.messages).toEqual(after.messages);
    expect(reimported.tokens).toBe(after.tokens);
    await d.client.request(SessionDelete, { sessionId });
  });
});

describe("turn/end", () => {
  it("over the threshold, prunes instead of summarizing when that alone is enough: no model call", async () => {
    const { sessionId, listingId } = await sessionWithOldListing();
    // Window 20,000 − reserveTokens 1,000: threshold 19,000; the reply measured 19,500.
    const answer = await d.client.request(TurnEnd, {
      sessionId,
      contextWindow: 20_000,
      assistant: {
        role: "assistant",
        content: [{ type: "text", text: "all done" }],
        stopReason: "stop",
        usage: { input: 19_500, output: 0, cacheRead: 0, cacheWrite: 0 },
      },
    });
    expect(answer.usage).toEqual({ tokens: 19_500, threshold: 19_000 });
    expect(answer.checkpoint).toMatchObject({
      status: "committed",
      rung: "prune",
      entry: { type: "prune", hidden: [{ entryId: listingId }] },
    });
    expect(answer.message).toMatch(/pruned 1 old tool output \(\d+ tokens\), no model call/);
    const usageAfter = await d.client.request(ContextBuild, { sessionId });
    expect(usageAfter.pruned?.entryIds).toEqual([listingId]);
    await d.client.request(SessionDelete, { sessionId });
  });
});

describe("the CLI", () => {
  it("compact --strategy prune prunes without a model, and show marks the pruned output", async () => {
    const { sessionId } = await sessionWithOldListing();
    const file = join(dirs.make("bc-prune-cli-"), "session.jsonl");
    await d.client.request(SessionExport, { sessionId, format: "pi-jsonl", path: file });
    await d.client.request(SessionDelete, { sessionId });

    const home = dirs.make("bc-prune-home-");
    writeFileSync(join(home, "settings.json"), JSON.stringify(SETTINGS));
    const compact = await runCli(["compact", file, "--strategy", "prune"], { home, env: { NO_COLOR: "1" } });
    expect(compact.code).toBe(0);
    expect(compact.stdout).toContain("Pruned tool outputs");
    expect(compact.stdout).toContain("bash find . -name '*.ts'");
    expect(compact.stdout).toMatch(/Rung\s+prune: 1 tool output hidden \([\d,]+ tokens\), no model call/);

    const show = await runCli(["show", sessionId.slice(0, 8), "--brief"], { home, env: { NO_COLOR: "1" } });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("toolResult bash (pruned)");
    expect(show.stdout).toMatch(/1 tool output pruned/);

    const bad = await runCli(["compact", file, "--strategy", "fold"], { home, env: { NO_COLOR: "1" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--strategy must be one of auto, prune, summarize");
  });
});
