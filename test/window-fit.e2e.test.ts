/**
 * Contexts that fit the window the client declared (docs/compaction-rungs.md#settings-that-fit-the-window),
 * over the protocol with the built daemon and its default settings: an agent loop of 40 turns
 * (`turn/end` after every turn) in windows from 4,096 to 1,000,000 tokens and turns of several
 * shapes (the issue's ~600-token request, ~900-token tool output and ~300-token reply; requests
 * that dwarf the rest; outputs of 3,000 and 6,000 tokens, larger than the smallest windows; one
 * output of 24,000; tiny turns) fits the window after every `turn/end`, keeps at least a quarter
 * of it once the session is that long, leaves the turns after a compaction room when they are small
 * beside the window, and writes summaries within the window's summary budget. `compaction/run`
 * with a window leaves a context that fits it, a tool output larger than the window included;
 * settings of the user's that cannot fit are reported in the answers and once in the log.
 */
import { fitToWindow, windowSummaryBudget, type WindowSizes } from "@base-context/core";
import {
  CompactionRun,
  ContextBuild,
  ContextUsage,
  DEFAULT_SETTINGS,
  EntryAppendMany,
  TurnEnd,
  type AssistantMessage,
  type BaseContextClient,
  type EntryInput,
} from "@base-context/protocol";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** The sizes of one turn, in tokens: the user's request, the tool's output (per turn), the model's reply. */
interface TurnShape {
  readonly request: number;
  readonly output: number | ((turn: number) => number);
  readonly reply: number;
}

const ISSUE_TURNS: TurnShape = { request: 600, output: 900, reply: 300 };

/** One turn's entries before its reply: the request, the model's tool call, the tool's output. */
function turnEntries(turn: number, shape: TurnShape = ISSUE_TURNS): EntryInput[] {
  const id = `call-${turn}`;
  const output = typeof shape.output === "number" ? shape.output : shape.output(turn);
  return [
    user(`Turn ${turn}: ${words(shape.request, turn)}`),
    assistant("", { toolCalls: [{ id, name: "read", arguments: { path: `src/file${turn}.ts` } }] }),
    toolResult(id, "read", words(output, 1000 + turn)),
  ];
}

const replyOf = (turn: number, shape: TurnShape = ISSUE_TURNS) =>
  (assistant(words(shape.reply, 2000 + turn)) as { message: AssistantMessage }).message;
const contextTokens = async (client: BaseContextClient, sessionId: string) => (await client.request(ContextBuild, { sessionId })).tokens;

const TURNS = 40;
const WINDOWS = [4_096, 6_000, 8_000, 10_000, 16_000, 20_000, 32_000, 48_000, 90_000, 128_000, 200_000, 1_000_000];
const SHAPES: Record<string, TurnShape> = {
  "the issue's turns (600/900/300)": ISSUE_TURNS,
  "request-heavy turns (2,500/200/300)": { request: 2_500, output: 200, reply: 300 },
  "output-heavy turns (100/3,000/200)": { request: 100, output: 3_000, reply: 200 },
  "outputs of 6,000 tokens (100/6,000/200)": { request: 100, output: 6_000, reply: 200 },
  "the issue's turns and one 24,000-token output on turn 10": { ...ISSUE_TURNS, output: (turn) => (turn === 10 ? 24_000 : 900) },
  "tiny turns (30/50/20)": { request: 30, output: 50, reply: 20 },
};

/** Compactions in 40 turns, by shape ("600/900/300") and window, as the loops below count them. */
const compactionCounts = new Map<string, number>();
const thousands = (n: number) => n.toLocaleString("en-US");
const shapeLabel = ({ request, output, reply }: TurnShape) =>
  typeof output === "number" ? `${thousands(request)}/${thousands(output)}/${thousands(reply)}` : undefined;

interface LoopRun {
  /** The context's tokens after each turn/end. */
  readonly sizes: number[];
  /** The turns (0-based) whose turn/end committed a compaction (either rung). */
  readonly compacted: number[];
  /** The summaries those compactions wrote. */
  readonly summaries: string[];
  readonly sessionId: string;
}

/** The loop: each turn's entries in one append, then turn/end with the reply and the window. */
async function agentLoop(client: BaseContextClient, contextWindow: number, shape: TurnShape): Promise<LoopRun> {
  const sessionId = await createSession(client, "/home/me/window-fit");
  const run: LoopRun = { sizes: [], compacted: [], summaries: [], sessionId };
  for (let turn = 1; turn <= TURNS; turn++) {
    await client.request(EntryAppendMany, { sessionId, entries: turnEntries(turn, shape) });
    const answer = await client.request(TurnEnd, { sessionId, contextWindow, assistant: replyOf(turn, shape) });
    if (answer.checkpoint?.status !== "committed") {
      // The estimate the threshold was checked with is the context: nothing changed it.
      run.sizes.push(answer.usage!.tokens);
      continue;
    }
    run.compacted.push(turn - 1);
    if (answer.checkpoint.entry?.type === "compaction") run.summaries.push(answer.checkpoint.entry.summary);
    run.sizes.push((await client.request(ContextUsage, { sessionId, contextWindow })).tokens);
  }
  return run;
}

/** What the session holds after each turn (no compaction): the measure of "the session is that long". */
async function sessionTotals(client: BaseContextClient, shape: TurnShape): Promise<number[]> {
  const sessionId = await createSession(client, "/home/me/window-fit");
  const totals: number[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const entries = [...turnEntries(turn, shape), { type: "message", message: replyOf(turn, shape) } as EntryInput];
    await client.request(EntryAppendMany, { sessionId, entries });
    totals.push((await client.request(ContextUsage, { sessionId, contextWindow: 10_000_000 })).tokens);
  }
  return totals;
}

describe.each(Object.entries(SHAPES))("40 turns of %s, default settings", (_name, shape) => {
  let totals: number[];
  beforeAll(async () => {
    totals = await sessionTotals(d.client, shape);
  });

  it.each(WINDOWS)(
    "fit a %i-token window after every turn/end, keep a quarter of it, leave room after a compaction, summaries within budget",
    async (contextWindow) => {
      const run = await agentLoop(d.client, contextWindow, shape);
      const label = shapeLabel(shape);
      if (label) compactionCounts.set(`${label} ${contextWindow}`, run.compacted.length);
      const quarter = contextWindow / 4;
      const reserve = Math.min(16_384, Math.floor(contextWindow / 4));
      const threshold = contextWindow - reserve;
      const report = `sizes ${JSON.stringify(run.sizes)}, compactions after turns ${JSON.stringify(run.compacted.map((t) => t + 1))}`;

      run.sizes.forEach((size, turn) => {
        expect(size, `turn ${turn + 1}: ${report}`).toBeLessThanOrEqual(contextWindow);
        if (totals[turn]! >= quarter) expect(size, `turn ${turn + 1}: ${report}`).toBeGreaterThanOrEqual(quarter);
        // Until the first compaction the context is the whole session.
        if (run.compacted.length === 0 || turn < run.compacted[0]!) expect(size, `turn ${turn + 1}`).toBe(totals[turn]);
      });
      // A loop longer than the threshold compacts; one shorter never does.
      expect(run.compacted.length > 0, report).toBe(totals.some((total) => total > threshold));

      // Turns small beside the room between a compacted context (a quarter) and the threshold are not
      // compacted one after the other, and the turns after a compaction have room.
      const turnSizes = totals.map((total, i) => total - (totals[i - 1] ?? 0));
      const largestTurn = Math.max(...turnSizes);
      const room = threshold - quarter;
      if (largestTurn <= room / 3) {
        run.compacted.slice(1).forEach((turn, i) => expect(turn - run.compacted[i]!, report).toBeGreaterThanOrEqual(2));
      }
      if (largestTurn <= room / 4) {
        for (const turn of run.compacted) expect(run.sizes[turn]! + 2 * largestTurn, `after turn ${turn + 1}: ${report}`).toBeLessThanOrEqual(threshold);
      }

      // Every summary fits the window's summary budget (0.8 × reserve, at four characters a token).
      for (const summary of run.summaries) expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(4 * Math.floor(0.8 * reserve));
      // The estimate the loop read is what the context holds.
      expect(await contextTokens(d.client, run.sessionId)).toBe(run.sizes.at(-1));
    },
    120_000,
  );
});

/** The rows of the table in docs/compaction-rungs.md whose header row starts with `header`, as cells. */
function docTable(header: string): { columns: string[]; rows: string[][] } {
  const lines = readFileSync(join(import.meta.dirname, "..", "docs", "compaction-rungs.md"), "utf8").split("\n");
  const start = lines.findIndex((line) => line.startsWith(header));
  expect(start, `a table starting with "${header}"`).toBeGreaterThanOrEqual(0);
  const cells = (line: string) => line.split("|").slice(1, -1).map((cell) => cell.trim());
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(cells(line));
  }
  return { columns: cells(lines[start]!), rows };
}
const count = (cell: string) => Number(cell.replaceAll(",", ""));

describe("the tables of docs/compaction-rungs.md", () => {
  it("the sizes for a window are what the daemon applies with the default settings", () => {
    const { compaction } = DEFAULT_SETTINGS;
    const defaults: WindowSizes = { ...compaction, ...compaction.prune };
    const { rows } = docTable("| window | reserve (threshold) |");
    expect(rows.length).toBeGreaterThan(5);
    for (const [window, reserve, kept, prunesTo, summary, pruneSizes] of rows) {
      const W = count(window!);
      const fitted = fitToWindow(W, defaults, new Set());
      const threshold = W - fitted.reserveTokens;
      const expected = [
        `${thousands(fitted.reserveTokens)} (${thousands(threshold)})`,
        thousands(fitted.keepRecentTokens),
        thousands(threshold - fitted.minSavings),
        thousands(windowSummaryBudget(W, fitted.reserveTokens).tokens),
        `${thousands(fitted.protectTokens)} / ${thousands(fitted.minTokens)}`,
      ];
      expect([reserve, kept, prunesTo, summary, pruneSizes], `window ${window}`).toEqual(expected);
      // "kept part, room": the room the prune rung leaves under the threshold is the kept part's size.
      expect(fitted.minSavings).toBe(fitted.keepRecentTokens);
    }
  });

  it("the compactions in 40 turns are what the loops above counted", () => {
    const { columns, rows } = docTable("| window | 600/900/300 |");
    // The table as measured: a cell the loops did not run (a name filter) stays as the doc has it.
    const measured = rows.map(([window, ...cells]) => [
      window!,
      ...cells.map((cell, i) => String(compactionCounts.get(`${columns[i + 1]} ${count(window!)}`) ?? cell)),
    ]);
    expect(measured.map((row) => row.join(" | "))).toEqual(rows.map((row) => row.join(" | ")));
    const labelled = Object.values(SHAPES).filter((shape) => shapeLabel(shape) !== undefined).length;
    if (compactionCounts.size === labelled * WINDOWS.length) {
      // Every cell of the table was measured.
      for (const [window] of rows) expect(WINDOWS).toContain(count(window!));
      for (const shape of columns.slice(1)) expect(Object.values(SHAPES).map(shapeLabel)).toContain(shape);
    }
  });
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
    const sessionId = await longSession(10, turnEntries(11, { ...ISSUE_TURNS, output: 30_000 }));
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
