/**
 * Contexts that fit the window the client declared (docs/compaction-rungs.md#settings-that-fit-the-window),
 * over the protocol with the built daemon and its default settings: an agent loop of 40 turns (a
 * ~600-token request, a ~900-token tool output, a ~300-token reply each, `turn/end` after every
 * turn) fits windows from 4k to 200k after every `turn/end` and keeps at least a quarter of the
 * window once the session is that long; `compaction/run` with a window leaves a context that fits
 * it, a tool output larger than the window included; settings of the user's that cannot fit are
 * reported in the answers and once in the log.
 */
import {
  CompactionRun,
  ContextBuild,
  ContextUsage,
  EntryAppend,
  EntryAppendMany,
  TurnEnd,
  type AssistantMessage,
  type BaseContextClient,
  type EntryInput,
} from "@base-context/protocol";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { assistant, createSession, toolResult, user } from "./fixtures/e2e.js";
import { useDaemon } from "./support/daemon.js";
import { tempDirs } from "./support/temp-dir.js";

// Default settings, no model: the offline extractive summarizer writes the summaries.
const d = useDaemon();
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const WORDS = (
  "the build config test file server client model token window cache reply request output error value option path " +
  "folder branch commit summary session daemon update change check result line table index query field record"
).split(" ");

/** About `count` tokens of words (one token each in o200k), the same for the same seed. */
function words(count: number, seed: number): string {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648);
  return Array.from({ length: count }, () => WORDS[next() % WORDS.length]).join(" ");
}

/** One turn's entries before its reply: the request, the model's tool call, the tool's output. */
function turnEntries(turn: number, outputTokens = 900): EntryInput[] {
  const id = `call-${turn}`;
  return [
    user(`Turn ${turn}: ${words(600, turn)}`),
    assistant("", { toolCalls: [{ id, name: "read", arguments: { path: `src/file${turn}.ts` } }] }),
    toolResult(id, "read", words(outputTokens, 1000 + turn)),
  ];
}

const replyOf = (turn: number) => (assistant(words(300, 2000 + turn)) as { message: AssistantMessage }).message;
const contextTokens = async (client: BaseContextClient, sessionId: string) => (await client.request(ContextBuild, { sessionId })).tokens;

interface LoopRun {
  /** The context's tokens after each turn/end. */
  sizes: number[];
  /** Tokens appended so far, after each turn. */
  totals: number[];
  compactions: number;
}

async function agentLoop(client: BaseContextClient, contextWindow: number, turns = 40): Promise<LoopRun> {
  const sessionId = await createSession(client, "/home/me/window-fit");
  const run: LoopRun = { sizes: [], totals: [], compactions: 0 };
  let total = 0;
  for (let turn = 1; turn <= turns; turn++) {
    for (const entry of turnEntries(turn)) total += (await client.request(EntryAppend, { sessionId, entry })).tokens;
    const answer = await client.request(TurnEnd, { sessionId, contextWindow, assistant: replyOf(turn) });
    if (answer.checkpoint?.status === "committed") run.compactions++;
    run.sizes.push(await contextTokens(client, sessionId));
    total += 300;
    run.totals.push(total);
  }
  return run;
}

describe("the 40-turn agent loop, default settings", () => {
  it.each([4_000, 5_000, 8_000, 12_000, 16_000, 24_000, 32_000, 64_000, 200_000])(
    "fits a %i-token window after every turn/end, keeping at least a quarter of it",
    async (contextWindow) => {
      const run = await agentLoop(d.client, contextWindow);
      const quarter = contextWindow / 4;
      const report = JSON.stringify(run.sizes);
      for (const size of run.sizes) expect(size, report).toBeLessThanOrEqual(contextWindow);
      run.sizes.forEach((size, turn) => {
        if (run.totals[turn]! >= quarter) expect(size, `turn ${turn + 1}: ${report}`).toBeGreaterThanOrEqual(quarter);
      });
      // The loop is long enough for every window up to 64k to need compactions (74k tokens in all).
      if (contextWindow <= 64_000) expect(run.compactions).toBeGreaterThan(0);
      // Not one per turn once a turn (~1 850 tokens) is less than a quarter of the window; rarer as it grows.
      if (contextWindow >= 8_000) expect(run.compactions).toBeLessThan(40);
      if (contextWindow >= 16_000) expect(run.compactions).toBeLessThanOrEqual(40 / 3);
    },
    120_000,
  );
});

describe("compaction/run with a window", () => {
  /** A session of `turns` whole turns (~1 850 tokens each), then `extra` entries. */
  async function longSession(turns: number, extra: EntryInput[] = []): Promise<string> {
    const sessionId = await createSession(d.client, "/home/me/window-fit");
    const entries: EntryInput[] = [];
    for (let turn = 1; turn <= turns; turn++) entries.push(...turnEntries(turn), { type: "message", message: replyOf(turn) });
    await d.client.request(EntryAppendMany, { sessionId, entries: [...entries, ...extra] });
    return sessionId;
  }

  it.each([4_000, 12_000, 32_000])("leaves a 60k-token session inside a %i-token window, and at least a quarter of it", async (contextWindow) => {
    const sessionId = await longSession(33);
    expect(await contextTokens(d.client, sessionId)).toBeGreaterThan(55_000);
    const result = await d.client.request(CompactionRun, { sessionId, contextWindow });
    expect(result.status).toBe("committed");
    const after = await contextTokens(d.client, sessionId);
    expect(after).toBeLessThanOrEqual(contextWindow);
    expect(after).toBeGreaterThanOrEqual(contextWindow / 4);
    expect(result.stats?.tokensAfter).toBeLessThanOrEqual(contextWindow);
  });

  it("cuts a tool output larger than the window before anything is sent: its beginning and end, and the note", async () => {
    const sessionId = await longSession(10, turnEntries(11, 30_000));
    const result = await d.client.request(CompactionRun, { sessionId, contextWindow: 8_000 });
    expect(result).toMatchObject({ status: "committed", truncated: { outputs: 1 }, message: expect.stringContaining("cut 1 tool output") });
    expect(result.truncated!.tokensSaved).toBeGreaterThan(25_000);
    const context = await d.client.request(ContextBuild, { sessionId });
    expect(context.tokens).toBeLessThanOrEqual(8_000);
    const output = context.messages.at(-1) as { role: string; content: { text: string }[] };
    expect(output.role).toBe("toolResult");
    const full = words(30_000, 1000 + 11);
    expect(output.content[0]!.text.startsWith(full.slice(0, 200))).toBe(true);
    expect(output.content[0]!.text.endsWith(full.slice(-200))).toBe(true);
    expect(output.content[0]!.text).toContain("cut here to fit the context window: ");
  });
});

describe("settings of the user's that cannot fit the window", () => {
  it("are used as set and reported in context/usage, compaction/run and turn/end, and once in the log", async () => {
    const project = dirs.make("bc-window-conflict-");
    mkdirSync(join(project, ".base-context"));
    writeFileSync(join(project, ".base-context", "settings.json"), JSON.stringify({ compaction: { reserveTokens: 16_384 } }));
    const sessionId = await createSession(d.client, project);
    const conflict = "the compaction settings cannot fit the model's window (8,000 tokens)";

    const usage = await d.client.request(ContextUsage, { sessionId, contextWindow: 8_000 });
    expect(usage).toMatchObject({ threshold: 8_000 - 16_384, settings: { reserveTokens: 16_384, keepRecentTokens: 2_000 } });
    expect(usage.reason).toContain(conflict);
    expect(usage.reason).toContain("Lower compaction.reserveTokens (set by you)");

    await d.client.request(EntryAppendMany, { sessionId, entries: [...turnEntries(1), ...turnEntries(2)] });
    const answer = await d.client.request(TurnEnd, { sessionId, contextWindow: 8_000, assistant: replyOf(2) });
    expect(answer.message).toContain(conflict);
    const run = await d.client.request(CompactionRun, { sessionId, contextWindow: 8_000 });
    expect(run.message).toContain(conflict);
    // Every client sends its window every turn: the log says it once.
    expect(d.stderr().split(conflict).length - 1).toBe(1);

    // In a window large enough for them, nothing is reported.
    const roomy = await d.client.request(ContextUsage, { sessionId, contextWindow: 200_000 });
    expect(roomy.reason).toBeUndefined();
  });
});
