/**
 * An Agents SDK session that keeps its word (the real `@openai/agents` 0.20 under Node 24, against
 * the fake OpenAI server, the daemon's default settings): with `contextWindow` 8000 and 40 turns of
 * two tool calls, no model request is larger than the window — counted as a provider counts it,
 * instructions and tool schemas included — compactions come within a few turns and not on every
 * turn, and `popItem` then works down to an empty context; the session's `compaction` option is the
 * threshold's too; its failures are its own documented errors; a spawned daemon killed mid-run stops
 * the run within a second, before the next model call, naming the signal.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentReply, isAgentRequest, runScenario, scenarioEnv, type ScenarioEvent, type UsageReport } from "./support/agents-sdk.js";
import { DAEMON_MAIN } from "./support/daemon.js";
import { startFakeOpenAI, type FakeOpenAI } from "./support/fake-openai.js";
import { ensureNode } from "./support/other-node.js";
import { requestTokens } from "./support/request-tokens.js";
import { TEST_NODE } from "./support/test-node.js";
import { tempDirs } from "./support/temp-dir.js";

const WINDOW = 8_000;
const TURNS = 40;

describe("an Agents SDK session with a small window, default settings", () => {
  const dirs = tempDirs();
  let fake: FakeOpenAI;
  let node24: string;
  let usageReport: UsageReport = "counted";

  beforeAll(async () => {
    // Downloads the pinned release from the npm registry on the first run only.
    node24 = ensureNode(24);
    fake = await startFakeOpenAI({ handler: (request) => agentReply(request.body, usageReport) });
  }, 600_000);
  afterAll(async () => {
    await fake?.close();
    dirs.cleanup();
  });

  /** A home of its own, the window, the test's daemon spawned over stdio. */
  const windowEnv = () =>
    scenarioEnv(dirs.make("bc-agents-window-"), fake.baseURL, {
      CONTEXT_WINDOW: String(WINDOW),
      BASE_CONTEXT_DAEMON_COMMAND: JSON.stringify([TEST_NODE, DAEMON_MAIN, "serve"]),
    });

  const compactedTurns = (events: ScenarioEvent[]) =>
    events
      .filter((event) => event.event === "turn" && (event["compaction"] as { status?: string } | undefined)?.status === "committed")
      .map((event) => event["turn"] as number);

  // The provider's usage is what measures the instructions and tool schemas the SDK adds; a server
  // that reports none leaves the daemon its own counts, and the reserve holds what they miss.
  it.each<UsageReport>(["counted", "rough", "none"])(
    "40 turns with tools, usage %s: no request above the window, compactions every few turns, then popItem down to nothing",
    async (report) => {
      usageReport = report;
      const first = fake.requests.length;
      const { events, code, stderr } = await runScenario(["window", String(TURNS)], windowEnv(), node24);
      expect(code, stderr).toBe(0);
      expect(events.filter((event) => event.event === "turn")).toHaveLength(TURNS);

      const sizes = fake.requests.slice(first).filter(isAgentRequest).map((request) => requestTokens(request.body));
      expect(sizes).toHaveLength(2 * TURNS);
      expect(Math.max(...sizes), JSON.stringify(sizes)).toBeLessThanOrEqual(WINDOW);

      const compacted = compactedTurns(events);
      expect(compacted.length).toBeGreaterThanOrEqual(3);
      // Within a few turns of the context filling (a turn adds ~600 tokens: ~10 turns to 6,000), and not every turn.
      expect(compacted[0]).toBeLessThanOrEqual(12);
      expect(compacted.length).toBeLessThanOrEqual(TURNS / 2);
      const gaps = compacted.slice(1).map((turn, i) => turn - compacted[i]!);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(8);

      // popItem through the compactions (past a first kept entry the context is the path as it is) to nothing.
      const popped = events.find((event) => event.event === "poppedAll" || event.event === "popFailed")!;
      expect(popped, JSON.stringify(popped)).toMatchObject({ event: "poppedAll", left: 0, mismatches: [] });
      expect(popped["pops"]).toBeGreaterThan(100);
      expect(popped["afterPop"]).toBeUndefined();
    },
    300_000,
  );

  it("keeps runs larger than the reserve under the window: it compacts before one would not fit", async () => {
    usageReport = "counted";
    const first = fake.requests.length;
    // ~2,200 tokens a run (a file of 120 lines read each turn): more than the reserve, a quarter of the window.
    const { events, code, stderr } = await runScenario(["window", "20"], { ...windowEnv(), READ_LINES: "120" }, node24);
    expect(code, stderr).toBe(0);
    const sizes = fake.requests.slice(first).filter(isAgentRequest).map((request) => requestTokens(request.body));
    expect(sizes).toHaveLength(40);
    expect(Math.max(...sizes), JSON.stringify(sizes)).toBeLessThanOrEqual(WINDOW);
    expect(compactedTurns(events).length).toBeGreaterThanOrEqual(3);
  }, 300_000);

  it("uses the session's compaction option for the threshold, and fails with errors of its own", async () => {
    usageReport = "counted";
    const { events, code, stderr } = await runScenario(["options"], windowEnv(), node24);
    expect(code, stderr).toBe(0);
    // { contextWindow: 20000, compaction: { reserveTokens: 2000 } }: the threshold is 18,000 (it was the daemon's 20,000 − 16,384).
    const tuned = events.find((event) => event.event === "tuned")!;
    expect((tuned["lastCompaction"] as { skipped: string }).skipped).toMatch(/^under the threshold \(\d+\/18000 tokens\)$/);

    const refused = events.filter((event) => event.event === "refused").map((event) => event["error"]);
    expect(refused).toEqual([
      expect.objectContaining({ name: "BaseContextError", code: "invalid_options", isBaseContextError: true }),
      expect.objectContaining({ code: "invalid_options", message: "compaction.keepRecentTokens must be a non-negative integer of tokens, got -1" }),
      expect.objectContaining({ code: "invalid_items", message: "replaceHistoryWithCompaction needs a compaction item first" }),
      expect.objectContaining({ code: "daemon_error", rpcCode: expect.any(Number), message: expect.stringMatching(/^the daemon refused entry\/appendMany: /) }),
    ]);
    expect(events.some((event) => event.event === "accepted")).toBe(false);
  }, 120_000);

  it("stops a run within a second of a spawned daemon's death, before the next model call, naming the signal", async () => {
    usageReport = "counted";
    let daemonPid: number | undefined;
    let killedAt = 0;
    let requestsAtKill = 0;
    fake.setHandler(async (request) => {
      const last = request.body?.messages?.at(-1);
      if (isAgentRequest(request) && last?.role === "tool" && killedAt === 0) {
        process.kill(daemonPid!, "SIGKILL");
        killedAt = Date.now();
        requestsAtKill = fake.requests.length;
        // A slow answer: the run must not wait for it.
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      }
      return agentReply(request.body);
    });
    try {
      const { events, code, stderr } = await runScenario(["kill"], windowEnv(), node24, (child) => {
        child.stdout!.once("data", () => {
          // The scenario's first event comes once the session opened: its daemon is its child by then.
          daemonPid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(/\s+/)[0]);
        });
      });
      expect(code, stderr).toBe(0);
      expect(killedAt).toBeGreaterThan(0);
      const error = events.find((event) => event.event === "error");
      expect(error, JSON.stringify(events)).toMatchObject({ name: "DaemonGoneError", code: "daemon_gone", signalAborted: true });
      expect(String(error!["message"])).toMatch(/^the daemon \(.+\) was killed by SIGKILL/);
      expect(error!.at - killedAt).toBeLessThanOrEqual(1_000);
      // No model call and no tool after the daemon's death.
      expect(fake.requests.length).toBe(requestsAtKill);
      expect(events.filter((event) => event.event === "tool" && event.at > killedAt)).toEqual([]);
      expect(events.some((event) => event.event === "finished")).toBe(false);
    } finally {
      fake.setHandler((request) => agentReply(request.body, usageReport));
    }
  }, 120_000);
});
