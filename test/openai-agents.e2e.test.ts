/**
 * The real OpenAI Agents SDK (`@openai/agents`, under Node 24 from the npm registry: its openai 7
 * needs Node ≥ 22) with a BaseContextSession, against the fake OpenAI server: a long run with tool
 * calls compacts through runCompaction, the model then reads the summary and the kept tail with
 * every call paired with its output, popItem and clearSession move the leaf, and a daemon killed
 * mid-run ends the run with an error.
 */
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CompactionStatusRequest, SessionTree } from "@base-context/protocol";
import { agentReply, isAgentRequest, runScenario, scenarioEnv, SUMMARY_MARK, unpaired } from "./support/agents-sdk.js";
import { DAEMON_MAIN, startDaemon } from "./support/daemon.js";
import { startFakeOpenAI, type FakeOpenAI } from "./support/fake-openai.js";
import { ensureNode } from "./support/other-node.js";
import { spawnRawSocketDaemon } from "./support/raw-daemon.js";
import { TEST_NODE } from "./support/test-node.js";
import { tempDirs } from "./support/temp-dir.js";

const SETTINGS = { compaction: { reserveTokens: 1500, keepRecentTokens: 1500, prune: { enabled: false } } };

describe("OpenAI Agents SDK sessions in Base Context", () => {
  const dirs = tempDirs();
  let fake: FakeOpenAI;
  let node24: string;

  beforeAll(async () => {
    // Downloads the pinned release from the npm registry on the first run only.
    node24 = ensureNode(24);
    fake = await startFakeOpenAI({ handler: (request) => agentReply(request.body) });
  }, 600_000);
  afterAll(async () => {
    await fake?.close();
    dirs.cleanup();
  });

  const scenarioEnvOf = (home: string, extra: NodeJS.ProcessEnv) => scenarioEnv(home, fake.baseURL, extra);

  // 31 turns: the last one does not compact, so the forced compaction after it has turns to summarize
  // (right after a compaction only the kept part is left, which a forced run keeps too).
  it("compacts a 31-turn run through runCompaction, pairs calls with outputs, pops and clears as branch moves", async () => {
    const home = dirs.make("bc-agents-");
    writeFileSync(`${home}/settings.json`, JSON.stringify(SETTINGS));
    const first = fake.requests.length;
    const { events, code, stderr } = await runScenario(
      ["long", "31"],
      scenarioEnvOf(home, { BASE_CONTEXT_DAEMON_COMMAND: JSON.stringify([TEST_NODE, DAEMON_MAIN, "serve"]) }),
      node24,
    );
    expect(code, stderr).toBe(0);
    const turns = events.filter((event) => event.event === "turn");
    expect(turns).toHaveLength(31);
    const compactions = turns.filter((turn) => (turn["compaction"] as { status?: string } | undefined)?.status === "committed");
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    for (const turn of compactions) {
      const retention = (turn["compaction"] as { retention?: { files: { kept: number; total: number } } }).retention;
      expect(retention?.files.total).toBeGreaterThan(0);
    }

    // What the SDK sent the model after each compaction: the summary first, then the kept tail, every call paired.
    const agentRequests = fake.requests.slice(first).filter(isAgentRequest);
    const afterCompaction = agentRequests.filter((request) => JSON.stringify(request.body?.messages).includes(SUMMARY_MARK));
    expect(afterCompaction.length).toBeGreaterThan(10);
    for (const request of afterCompaction) {
      const messages = request.body!.messages!;
      const [system, summary, ...tail] = messages;
      expect(system?.role).toBe("system");
      expect(summary?.role).toBe("user");
      expect(String(summary?.content)).toContain(SUMMARY_MARK);
      expect(JSON.stringify(tail)).not.toContain(SUMMARY_MARK);
      expect(unpaired(messages)).toEqual([]);
      // Fewer messages than the turns so far hold (six each): the older turns reach the model as the summary only.
      const turn = Number(/Turn (\d+)/.exec(JSON.stringify(messages.filter((message) => message.role === "user").at(-1)))?.[1]);
      expect(messages.length).toBeLessThan(6 * (turn - 1));
    }
    // The summaries were written by the app's model, lent over model/complete.
    const summaryRequests = fake.requests.slice(first).filter((request) => !isAgentRequest(request));
    expect(summaryRequests.length, JSON.stringify(compactions.map((turn) => turn["compaction"]))).toBeGreaterThanOrEqual(compactions.length);
    expect(summaryRequests.every((request) => request.body?.model === "fake-agent-model")).toBe(true);

    // popItem after the compactions: the last item goes, the summary stays first.
    const items = events.find((event) => event.event === "items")!["items"] as Record<string, unknown>[];
    const popped = events.find((event) => event.event === "popped")!;
    expect(popped["popped"]).toEqual(items.at(-1));
    expect(popped["items"]).toEqual(items.slice(0, -1));
    expect(String((items[0] as { content?: unknown }).content)).toContain(SUMMARY_MARK);
    // A forced compaction compacts now, with the lent model's usage reported to the runner.
    const forced = events.find((event) => event.event === "forced")!;
    expect(forced["status"]).toBe("committed");
    expect((forced["usage"] as { inputTokens?: number } | null)?.inputTokens).toBeGreaterThan(0);
    // clearSession: nothing left in the context; the next run starts a new branch.
    expect(events.find((event) => event.event === "cleared")!["items"]).toEqual([]);
    const afterClear = events.find((event) => event.event === "afterClear")!;
    const fresh = afterClear["items"] as Record<string, unknown>[];
    expect(fresh[0]).toMatchObject({ role: "user", content: "Turn after clear: fix src/fresh.ts" });
    expect(fresh.map((item) => item["type"] ?? "message")).toEqual(["message", "function_call", "function_call", "function_call_result", "function_call_result", "message"]);

    // The stored session, read by another client: nothing was deleted, the compactions carry their retention.
    const sessionId = events.find((event) => event.event === "session")!["sessionId"] as string;
    const daemon = await startDaemon({ home });
    try {
      const { nodes = [] } = await daemon.client.request(SessionTree, { sessionId, flat: true });
      const stored = nodes.map((node) => node.entry);
      const summaries = stored.filter((entry) => entry.type === "compaction" && !(entry.details as { agentsItems?: unknown })?.agentsItems);
      expect(summaries.length).toBeGreaterThanOrEqual(compactions.length + 1);
      for (const entry of summaries) expect((entry.details as { retention?: unknown }).retention).toBeDefined();
      const userTurns = stored.filter((entry) => entry.type === "message" && entry.message.role === "user");
      expect(userTurns).toHaveLength(32);
      const { jobs } = await daemon.client.request(CompactionStatusRequest, { sessionId, limit: 100 });
      expect(jobs.filter((job) => job.state === "committed" && job.reason === "threshold").length).toBe(compactions.length);
    } finally {
      await daemon.close();
    }
  }, 300_000);

  it("fails the run with the SDK's error path when the daemon (over its socket) dies mid-run", async () => {
    const home = dirs.make("bc-agents-kill-");
    const socketDaemon = await spawnRawSocketDaemon(home);
    let killed = false;
    fake.setHandler(async (request) => {
      const last = request.body?.messages?.at(-1);
      if (isAgentRequest(request) && last?.role === "tool" && !killed) {
        killed = true;
        socketDaemon.process.kill("SIGKILL");
        await socketDaemon.exitCode;
      }
      return agentReply(request.body);
    });
    try {
      const { events, code, stderr } = await runScenario(["kill"], scenarioEnvOf(home, { BASE_CONTEXT_SOCKET: socketDaemon.path }), node24);
      expect(code, stderr).toBe(0);
      expect(killed).toBe(true);
      const error = events.find((event) => event.event === "error");
      expect(error, JSON.stringify(events)).toBeDefined();
      expect(String(error!["message"])).toMatch(/daemon at .* closed the connection/);
      expect(events.some((event) => event.event === "finished")).toBe(false);
    } finally {
      fake.setHandler((request) => agentReply(request.body));
      if (socketDaemon.process.exitCode === null) socketDaemon.process.kill("SIGKILL");
    }
  }, 120_000);
});
