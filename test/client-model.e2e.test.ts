/**
 * Summaries written by the client's own model (`model/complete`, docs/summaries.md), over stdio
 * and over the socket: the client that offers its model writes the compaction, turn-prefix and
 * branch summaries; cancelling the compaction cancels the client's request; a client that errors,
 * hangs or disconnects leads to the fallback with the reason in the entry's details; a client
 * that did not opt in never receives the request; and with a key variable set but no model named
 * in the settings, no request leaves for a model host.
 */
import {
  CompactionRun,
  CompactionStatusRequest,
  connect,
  ErrorCodes,
  ModelComplete,
  SessionCreate,
  SessionPath,
  TreeNavigate,
  TurnEnd,
  type BaseContextClient,
  type CompactionEntry,
  type EntryInput,
  type ResultOf,
  type ValidParamsOf,
} from "@base-context/protocol";
import { SUMMARIZATION_SYSTEM_PROMPT } from "@base-context/core";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { appendAll, assistant, rpcError, toolResult, user } from "./fixtures/e2e.js";
import { DAEMON_MAIN, startDaemon, type TestDaemon } from "./support/daemon.js";
import { useFakeOpenAI } from "./support/fake-openai.js";
import { tempDirs } from "./support/temp-dir.js";
import { waitFor } from "./support/wait.js";
import { storeEnvFor } from "./support/engine.js";
import { recordScore } from "./adversarial/scoreboard.js";
import { TEST_NODE } from "./support/test-node.js";

type Params = ValidParamsOf<typeof ModelComplete>;
type Answer = ResultOf<typeof ModelComplete>;
/** The model behind a test client: sees each request, answers (or not) as the test says. */
type FakeClientModel = (params: Params, signal: AbortSignal) => Answer | Promise<Answer>;

interface Asked {
  params: Params;
  signal: AbortSignal;
}

interface TestClient {
  client: BaseContextClient;
  /** Every model/complete this client received. */
  asked: Asked[];
  /** Ends the connection abruptly (socket: the client vanishes). */
  drop(): void;
}

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fake model that summarizes by naming what it was asked for: the tests can tell who wrote what. */
const clientWrites: FakeClientModel = (params) => ({
  text: `## Goal\nWritten by the client's model for ${params.purpose}.`,
  model: "client-llm-1",
  usage: { input: 100, output: 20 },
});

/** Never answers: only the daemon's `$/cancelRequest` (seen as the request's aborted signal) ends it. */
const hangs: FakeClientModel = () => new Promise<Answer>(() => undefined);

/**
 * Whether each model/complete the client's model was given has been cancelled. The daemon writes
 * a request's `$/cancelRequest` before the reply of the work it served, and the client reads in
 * order: once that reply is in, every request the model was given has its signal aborted. (One
 * cancelled before the client had dispatched it is answered -32800 without reaching the model.)
 */
const cancelledEach = (asked: Asked[]): boolean[] => asked.map((a) => a.signal.aborted);

/**
 * The daemons' global settings: compaction keeps only the last entry; the client's model gets no
 * retry and a short deadline (the "hangs" scenario waits it out).
 */
const SETTINGS = { compaction: { reserveTokens: 2000, keepRecentTokens: 1 }, summarizer: { maxRetries: 0, timeoutMs: 2000 } };

let projects = 0;
/**
 * A session's cwd. Not a folder on disk: no project plugins or settings are involved here, and a
 * socket daemon's plugin host does not open a project for it.
 */
function project(): string {
  return join("/nonexistent", `bc-client-model-${process.pid}`, String(++projects));
}

/** Two finished turns, then a turn cut in its middle by keepRecentTokens 1: history and a turn prefix to summarize. */
const SPLIT_TURN: EntryInput[] = [
  user("Rename parseConfig to loadConfig everywhere."),
  assistant("Renamed it in src/config.ts and updated 3 call sites."),
  user("Now run the tests and fix what fails."),
  assistant("Running them.", { toolCalls: [{ id: "call_1", name: "bash", arguments: { command: "npm test" } }] }),
  toolResult("call_1", "bash", "1 failing: loadConfig is not defined in test/setup.ts"),
  assistant("Fixed the import in test/setup.ts; all tests pass."),
];

async function sessionIn(
  client: BaseContextClient,
  cwd: string,
  entries: EntryInput[] = SPLIT_TURN,
): Promise<{ sessionId: string; ids: string[] }> {
  const { session } = await client.request(SessionCreate, { cwd });
  const stored = await appendAll(client, session.id, entries);
  return { sessionId: session.id, ids: stored.map((entry) => entry.id) };
}

function compactionOf(result: ResultOf<typeof CompactionRun>): CompactionEntry {
  expect(result.status, result.message).toBe("committed");
  return result.entry as CompactionEntry;
}

interface Details {
  summarizer: string;
  fallback?: { from: string; error: string };
  fallbacks?: { from: string; error: string }[];
}

// ---- transports ------------------------------------------------------------------------------------

interface Transport {
  /** A client; with `model`, it offers its model at initialize. */
  open(model?: FakeClientModel, options?: { env?: Record<string, string | undefined>; raw?: boolean }): Promise<TestClient>;
}

function answer(client: BaseContextClient, asked: Asked[], model: FakeClientModel | undefined, raw: boolean): void {
  if (raw) {
    // A client that did not opt in, but would answer: proves the daemon never asks it.
    client.connection.onRequest(ModelComplete.method, (params: Params) => {
      asked.push({ params, signal: new AbortController().signal });
      return clientWrites(params, new AbortController().signal);
    });
    return;
  }
  if (model) {
    client.onRequest(ModelComplete, (params, signal) => {
      asked.push({ params, signal });
      return model(params, signal);
    });
  }
}

const stdio: Transport = {
  async open(model, options = {}) {
    const daemon: TestDaemon = await startDaemon({ initialize: false, settings: SETTINGS, ...(options.env ? { env: options.env } : {}) });
    cleanups.push(() => daemon.close());
    const asked: Asked[] = [];
    answer(daemon.client, asked, model, options.raw ?? false);
    await daemon.client.initialize({ clientInfo: { name: "stdio-agent" } });
    return { client: daemon.client, asked, drop: () => daemon.process.kill("SIGKILL") };
  },
};

function socketTransport(): Transport & { start(env?: Record<string, string>): Promise<void>; stop(): Promise<void> } {
  let daemon: { process: ChildProcess; path: string; stderr: () => string; exited: Promise<unknown> } | undefined;
  return {
    async start(env = {}) {
      const home = dirs.make("bc-client-model-home-");
      const path = join(home, "daemon.sock");
      writeFileSync(join(home, "settings.json"), JSON.stringify(SETTINGS));
      const child = spawn(TEST_NODE, [DAEMON_MAIN, "serve", "--socket", path], {
        env: { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), OPENAI_API_KEY: "", ...env },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const exited = new Promise((resolve) => child.once("exit", resolve));
      daemon = { process: child, path, stderr: () => stderr, exited };
      await waitFor(() => stderr.includes("listening on"), { timeoutMs: 20_000, message: "the socket daemon did not start listening" });
    },
    async stop() {
      daemon?.process.kill("SIGTERM");
      await daemon?.exited;
    },
    async open(model, options = {}) {
      const socket: Socket = createConnection(daemon!.path);
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", resolve);
        socket.once("error", reject);
      });
      const client = connect(socket, socket);
      cleanups.push(() => {
        client.dispose();
        socket.destroy();
      });
      const asked: Asked[] = [];
      answer(client, asked, model, options.raw ?? false);
      await client.initialize({ clientInfo: { name: "socket-agent" } });
      return { client, asked, drop: () => socket.destroy() };
    },
  };
}

// ---- the scenarios, on both transports -------------------------------------------------------------

const socket = socketTransport();

for (const [name, transport] of [
  ["stdio", stdio],
  ["socket", socket],
] as const) {
  describe(`the client's own model over ${name}`, () => {
    if (transport === socket) {
      beforeAll(() => socket.start());
      afterAll(() => socket.stop());
    }

    it("writes the compaction's history and turn-prefix summaries; its model sees the prompts", async () => {
      const agent = await transport.open(clientWrites);
      const { sessionId } = await sessionIn(agent.client, project());
      const result = await agent.client.request(CompactionRun, { sessionId, reason: "manual" });
      const entry = compactionOf(result);

      expect(result.summarizer).toBe("client:client-llm-1");
      expect(entry.summary).toContain("Written by the client's model for compaction.");
      expect(entry.summary).toContain("Written by the client's model for turnPrefix.");
      expect(entry.details).toMatchObject({ summarizer: "client:client-llm-1" });
      expect((entry.details as Details).fallback).toBeUndefined();

      const purposes = agent.asked.map((a) => a.params.purpose).sort();
      expect(purposes).toEqual(["compaction", "turnPrefix"]);
      const history = agent.asked.find((a) => a.params.purpose === "compaction")!.params;
      expect(history.system).toBe(SUMMARIZATION_SYSTEM_PROMPT);
      expect(history.sessionId).toBe(sessionId);
      expect(history.maxTokens).toBeGreaterThan(0);
      expect(history.messages).toHaveLength(1);
      expect(history.messages[0]!.content).toContain("[User]: Rename parseConfig to loadConfig everywhere.");
      const prefix = agent.asked.find((a) => a.params.purpose === "turnPrefix")!.params;
      expect(prefix.messages[0]!.content).toContain("1 failing: loadConfig is not defined");
    });

    it("writes the branch summary when navigating the tree", async () => {
      const agent = await transport.open(clientWrites);
      const { sessionId, ids } = await sessionIn(agent.client, project());
      const result = await agent.client.request(TreeNavigate, { sessionId, targetId: ids[1]!, summarize: true });

      expect(result.status).toBe("moved");
      const summary = result.summaryEntry as { summary: string; details: Details };
      expect(summary.summary).toContain("Written by the client's model for branchSummary.");
      expect(summary.details.summarizer).toBe("client:client-llm-1");
      expect(agent.asked.map((a) => a.params.purpose)).toEqual(["branchSummary"]);
      expect(agent.asked[0]!.params.messages[0]!.content).toContain("Now run the tests and fix what fails.");
    });

    it("writes the threshold compaction turn/end decides on", async () => {
      const agent = await transport.open(clientWrites);
      const { sessionId } = await sessionIn(agent.client, project());
      // A window just above compaction.reserveTokens: the session is over the threshold.
      const answer = await agent.client.request(TurnEnd, { sessionId, contextWindow: 2_050 });

      expect(answer.checkpoint).toMatchObject({ status: "committed", summarizer: "client:client-llm-1" });
      expect(agent.asked.map((a) => a.params.purpose).sort()).toEqual(["compaction", "turnPrefix"]);
    });

    it("cancelling the compaction cancels the client's request, and nothing is written", async () => {
      const agent = await transport.open(hangs);
      const { sessionId } = await sessionIn(agent.client, project());
      const controller = new AbortController();
      const run = rpcError(agent.client.request(CompactionRun, { sessionId, reason: "manual" }, { signal: controller.signal }));
      await waitFor(() => agent.asked.length > 0, { message: "the client's model was not asked" });
      controller.abort();

      expect((await run).code).toBe(ErrorCodes.RequestCancelled);
      // History and turn prefix were asked in parallel; the turn prefix's request may still wait in
      // the client's queue when both cancels arrive (then the model never sees it).
      expect(cancelledEach(agent.asked)).toEqual(agent.asked.map(() => true));
      const path = await agent.client.request(SessionPath, { sessionId });
      expect(path.entries.some((entry) => entry.type === "compaction")).toBe(false);
    });

    it("a client that answers with an error leads to the extractive fallback, the reason in the entry's details", async () => {
      const agent = await transport.open(() => {
        throw new Error("quota exceeded for the agent's model");
      });
      const { sessionId } = await sessionIn(agent.client, project());
      const entry = compactionOf(await agent.client.request(CompactionRun, { sessionId, reason: "manual" }));
      const details = entry.details as Details;

      expect(details.summarizer).toBe("extractive");
      expect(details.fallbacks?.map((f) => f.from)).toEqual(["client", "client"]);
      expect(details.fallback?.error).toMatch(
        /^summarizer client failed: the client "(stdio|socket)-agent"( \(connection \d+\))? answered model\/complete with an error \(-32603\): quota exceeded for the agent's model$/,
      );
      expect(entry.summary).toMatch(/^## Goal\n/);
    });

    it("a client that does not answer within summarizer.timeoutMs leads to the fallback; its request is cancelled", async () => {
      const agent = await transport.open(hangs);
      const { sessionId } = await sessionIn(agent.client, project(), SPLIT_TURN.slice(0, 3));
      const entry = compactionOf(await agent.client.request(CompactionRun, { sessionId, reason: "manual" }));
      const details = entry.details as Details;

      expect(details.summarizer).toBe("extractive");
      expect(details.fallback?.error).toMatch(/did not answer model\/complete within \d+ ms$/);
      expect(cancelledEach(agent.asked)).toEqual([true]);
    });

    it("a client that did not opt in never receives model/complete", async () => {
      const agent = await transport.open(undefined, { raw: true });
      const { sessionId, ids } = await sessionIn(agent.client, project());
      const compaction = await agent.client.request(CompactionRun, { sessionId, reason: "manual" });
      expect(compaction.summarizer).toBe("extractive");
      const navigation = await agent.client.request(TreeNavigate, { sessionId, targetId: ids[0]!, summarize: true });
      expect((navigation.summaryEntry!.details as Details).summarizer).toBe("extractive");
      expect(agent.asked).toEqual([]);
    });
  });
}

describe("the client's own model over the socket, with several clients", () => {
  beforeAll(() => socket.start());
  afterAll(() => socket.stop());

  it("a 50 MB answer is refused as over limits.maxSummaryBytes; the compaction commits by the fallback, with the reason", async () => {
    // A deadline long enough for 50 MB to cross stdio twice (history and turn prefix) on a loaded machine.
    const settings = { ...SETTINGS, summarizer: { maxRetries: 0, timeoutMs: 120_000 } };
    const daemon: TestDaemon = await startDaemon({ initialize: false, settings });
    cleanups.push(() => daemon.close());
    const huge = "y".repeat(50 * 1024 * 1024);
    daemon.client.onRequest(ModelComplete, () => ({ text: huge, model: "client-llm-1" }));
    await daemon.client.initialize({ clientInfo: { name: "stdio-agent" } });
    const { sessionId } = await sessionIn(daemon.client, project());
    const entry = compactionOf(await daemon.client.request(CompactionRun, { sessionId, reason: "manual" }));
    const details = entry.details as Details;

    expect(details.summarizer).toBe("extractive");
    expect(details.fallback?.error).toMatch(/answered model\/complete with 52428800 bytes of text, over limits\.maxSummaryBytes \(1048576 bytes\)$/);
    expect(entry.summary.length).toBeLessThan(1024 * 1024);
    recordScore({ area: "client model", scenario: "50 MB model/complete answer", tried: 1, survived: 1, lost: 0 });
  }, 180_000);

  it("asks the connection whose call started the work, not another client that offers its model", async () => {
    const editor = await socket.open(clientWrites);
    const agent = await socket.open(clientWrites);
    const { sessionId } = await sessionIn(agent.client, project());
    compactionOf(await agent.client.request(CompactionRun, { sessionId, reason: "manual" }));
    expect(agent.asked.length).toBe(2);
    expect(editor.asked).toEqual([]);
  });

  it("a compaction that outlives its client's connection falls back, with the reason in the details", async () => {
    const agent = await socket.open((_params) => {
      // The client vanishes while its model is being asked.
      setImmediate(() => agent.drop());
      return new Promise<Answer>(() => undefined);
    });
    const watcher = await socket.open();
    const { sessionId } = await sessionIn(agent.client, project(), SPLIT_TURN.slice(0, 3));
    void agent.client.request(CompactionRun, { sessionId, reason: "manual", requestId: "outlives-its-client" }).catch(() => undefined);

    const job = await waitFor(
      async () =>
        (await watcher.client.request(CompactionStatusRequest, { requestId: "outlives-its-client" })).jobs.find(
          (j) => j.state === "committed",
        ),
      { timeoutMs: 20_000, message: "the compaction did not commit after its client left" },
    );
    const path = await watcher.client.request(SessionPath, { sessionId });
    const entry = path.entries.find((e) => e.id === job.entryId) as CompactionEntry;
    const details = entry.details as Details;
    expect(details.summarizer).toBe("extractive");
    expect(details.fallback?.error).toMatch(
      /summarizer client failed: the client "socket-agent" \(connection \d+\) disconnected before it (answered|could be asked)/,
    );
  });
});

describe("no surprise hosts", () => {
  const remote = useFakeOpenAI();
  beforeEach(() => {
    remote.requests.length = 0;
  });
  const withSettings = (settings: Record<string, unknown>): string => {
    const dir = dirs.make("bc-client-model-project-");
    mkdirSync(join(dir, ".base-context"));
    writeFileSync(join(dir, ".base-context", "settings.json"), JSON.stringify(settings));
    return dir;
  };

  it("with OPENAI_API_KEY set and no summarizer settings, nothing is sent to the default host; the result names the summarizer", async () => {
    // The fake server stands in for the provider's default host (OPENAI_BASE_URL points there).
    const daemon = await startDaemon({ env: { OPENAI_API_KEY: "sk-user", OPENAI_BASE_URL: remote.baseURL } });
    cleanups.push(() => daemon.close());
    const { sessionId } = await sessionIn(daemon.client, withSettings({ compaction: { reserveTokens: 2000, keepRecentTokens: 1 } }));
    const result = await daemon.client.request(CompactionRun, { sessionId, reason: "manual" });

    expect(result.summarizer).toBe("extractive");
    expect(result.message).toMatch(/ with extractive$/);
    expect(remote.requests).toEqual([]);
    // The user who relied on the key alone is told what changed and how to restore it.
    // stderr is a pipe of its own: its lines may arrive after the replies.
    await waitFor(() => daemon.stderr().includes("$OPENAI_API_KEY is set, but a key alone no longer sends conversations to a model host"), {
      message: "no migration note",
    });
    expect(daemon.stderr()).toContain('"summarizer": { "model": "gpt-4o-mini" }');
  });

  it("a model named in the global settings is used, and the result states its host", async () => {
    const daemon = await startDaemon({
      settings: { summarizer: { model: "named-model", baseURL: remote.baseURL } },
      env: { OPENAI_API_KEY: "sk-user" },
    });
    cleanups.push(() => daemon.close());
    const { sessionId } = await sessionIn(daemon.client, withSettings({ compaction: { reserveTokens: 2000, keepRecentTokens: 1 } }));
    const result = await daemon.client.request(CompactionRun, { sessionId, reason: "manual" });

    expect(result.summarizer).toBe("openai:named-model");
    expect(result.message).toContain(`with openai:named-model at ${remote.baseURL.replace(/\/+$/, "")}`);
    expect(remote.requests.length).toBeGreaterThan(0);
    const stated = `summarizer: auto: the connected client's own model when it offers one (model/complete), else model named-model at ${remote.baseURL.replace(/\/+$/, "")}`;
    await waitFor(() => daemon.stderr().includes(stated), { message: "the startup log did not state the summarizer and host" });
  });

  it("a project's settings cannot send conversations to a model: provider openai in a project file is refused", async () => {
    const daemon = await startDaemon({ env: { OPENAI_API_KEY: "sk-user", OPENAI_BASE_URL: remote.baseURL } });
    cleanups.push(() => daemon.close());
    const cwd = withSettings({ compaction: { keepRecentTokens: 1 }, summarizer: { provider: "openai", model: "m" } });
    const { sessionId } = await sessionIn(daemon.client, cwd);
    const result = await daemon.client.request(CompactionRun, { sessionId, reason: "manual", settings: { keepRecentTokens: 1 } });

    expect(result.summarizer).toBe("extractive");
    expect(remote.requests).toEqual([]);
    await waitFor(() => daemon.stderr().includes('summarizer.provider: "openai" cannot be set in a project\'s settings'), {
      message: "the refused key was not reported",
    });
  });
});
