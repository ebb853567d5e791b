/**
 * The session the protocol reference's examples come from: an agent fixing a login bug, told as
 * a client tells it to the daemon, one method after another. Runs the built daemon over stdio
 * (and once over a socket, for what only shared daemons send) against a temporary
 * BASE_CONTEXT_HOME. Every call is recorded; the first call of a method, and every call with a
 * title, is an example.
 *
 * To document a new method, add a call to it here (with meaningful params) and run `pnpm run docs`.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createConnection } from "node:net";
import { once } from "node:events";
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import * as protocol from "../../packages/protocol/dist/index.js";
import { Recorder } from "./recorder.mjs";

const P = protocol;
const PROJECT = "/home/me/project";
/** Message timestamps (ms) of the story, fixed so the examples do not change between runs. */
const T0 = Date.parse("2026-01-15T09:30:00.000Z");
const at = (seconds) => T0 + seconds * 1000;

const user = (text, seconds) => ({ type: "message", message: { role: "user", content: text, timestamp: at(seconds) } });
const assistant = (content, seconds, stopReason = "stop") => ({
  type: "message",
  message: {
    role: "assistant",
    content,
    provider: "openai",
    model: "gpt-4.1",
    usage: { input: 1200 + seconds * 10, output: 80, cacheRead: 0, cacheWrite: 0, totalTokens: 1280 + seconds * 10 },
    stopReason,
    timestamp: at(seconds),
  },
});
const toolResult = (toolCallId, toolName, text, seconds) => ({
  type: "message",
  message: { role: "toolResult", toolCallId, toolName, content: [{ type: "text", text }], isError: false, timestamp: at(seconds) },
});

const LOGIN_TS = [
  'export async function login(req, res) {',
  "  const { email, password } = req.body;",
  "  const user = await users.findByEmail(email);",
  "  if (!user || (password && !(await verify(user.hash, password)))) {",
  '    return res.status(401).json({ error: "invalid_credentials" });',
  "  }",
  "  req.session.userId = user.id;",
  "  res.json({ ok: true });",
  "}",
].join("\n");

/** A small pi session file (format v3) with one line that is not JSON, for session/import. */
const PI_FILE = [
  { type: "session", version: 3, id: "0f1e2d3c-4b5a-4697-8877-665544332211", timestamp: "2026-01-14T16:00:00.000Z", cwd: PROJECT },
  {
    type: "message",
    id: "a1b2c3d4",
    parentId: null,
    timestamp: "2026-01-14T16:00:01.000Z",
    message: { role: "user", content: "Add a /health endpoint", timestamp: Date.parse("2026-01-14T16:00:01.000Z") },
  },
]
  .map((line) => JSON.stringify(line))
  .concat(['{"type":"message","id":"e5f6a7b8","parentId":"a1b2c3d4",'])
  .join("\n");

/**
 * @param {{ daemonMain: string, home: string, socketPath: string, env: NodeJS.ProcessEnv }} options
 * @returns {Promise<import("./recorder.mjs").Exchange[]>}
 */
export async function runScenario(options) {
  installExamplePlugin(options.home);
  const recorder = new Recorder();
  await stdioStory(recorder, options);
  await clientModelStory(recorder, options);
  await sharedDaemonStory(recorder, options);
  return recorder.exchanges;
}

async function stdioStory(recorder, { daemonMain, env }) {
  const { client, exited } = P.spawnDaemon({ command: process.execPath, args: [daemonMain, "serve"], env, stderr: "ignore" });
  const rpc = recorder.connection(client, "the client");

  await rpc.request(P.Initialize, {
    protocolVersion: P.PROTOCOL_VERSION,
    processId: 4242,
    clientInfo: { name: "my-agent", version: "1.0.0" },
    projectDir: PROJECT,
  });
  await rpc.notify(P.Initialized, {});
  const turn = await firstTurn(rpc);
  await readsAndForks(rpc, turn);
  await compactionAndNavigation(rpc, turn);
  await statelessSummaries(rpc, turn);
  await settingsPluginsAndErrors(rpc, turn.sessionId);
  await rpc.request(P.Shutdown, {});
  await rpc.notify(P.Exit, {});
  await exited;
  client.dispose();
}

/** A session and its first turn: a request, a read, a fix. */
async function firstTurn(rpc) {
  const { session } = await rpc.request(P.SessionCreate, { cwd: PROJECT, name: "Fix the empty-password login" });
  const sessionId = session.id;
  const ask = await rpc.request(P.EntryAppend, {
    sessionId,
    entry: user("The login form accepts an empty password. Find out why and fix it.", 0),
  });
  const read = await rpc.request(P.EntryAppend, {
    sessionId,
    entry: assistant(
      [
        { type: "text", text: "Let me read the login handler." },
        { type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/auth/login.ts" } },
      ],
      5,
      "toolUse",
    ),
  });
  await rpc.request(P.EntryAppend, { sessionId, entry: toolResult("call_1", "read", LOGIN_TS, 6) }, { example: false });
  const fix = await rpc.request(P.EntryAppendMany, {
    sessionId,
    entries: [
      assistant(
        [
          { type: "text", text: 'An empty password skips the check: `password && …` is false for "". Requiring it:' },
          {
            type: "toolCall",
            id: "call_2",
            name: "edit",
            arguments: { path: "src/auth/login.ts", oldText: "(password && !(await verify", newText: "(!password || !(await verify" },
          },
        ],
        20,
        "toolUse",
      ),
      toolResult("call_2", "edit", "Edited src/auth/login.ts", 21),
      assistant([{ type: "text", text: "Fixed: a missing or empty password is now rejected with 401 invalid_credentials." }], 30),
    ],
  });

  return { sessionId, ask, read, fix };
}

/** Reading the session back, searching, labelling, forking, exporting and importing. */
async function readsAndForks(rpc, { sessionId, ask, read }) {
  await rpc.request(P.EntryGet, { sessionId, entryId: ask.entry.id });
  await rpc.request(P.SessionGet, { sessionId });
  await rpc.request(P.SessionList, { cwd: PROJECT, limit: 10 });
  await rpc.request(P.SessionList, { query: "password" }, { title: "Search by name or first message" });
  await rpc.request(P.SessionSearch, { query: "empty password", limit: 5 });
  await rpc.request(P.SessionPath, { sessionId });
  await rpc.request(P.ContextBuild, { sessionId, format: "openai-chat" }, { title: "OpenAI chat-completions messages" });
  await rpc.request(P.ContextBuild, { sessionId, format: "native" }, { title: "Native messages" });
  await rpc.request(P.ContextUsage, { sessionId, contextWindow: 128000 });
  await rpc.request(P.LabelSet, { sessionId, targetId: ask.entry.id, label: "bug report" });
  await rpc.request(P.SessionTree, { sessionId });

  const { session: fork } = await rpc.request(P.SessionFork, { sessionId, entryId: read.entry.id });
  await rpc.request(P.SessionRename, { sessionId: fork.id, name: "Login fix, reading first" });
  await rpc.request(P.SessionExport, { sessionId: fork.id, format: "pi-jsonl" });
  await rpc.request(P.SessionDelete, { sessionId: fork.id });
  await rpc.request(P.SessionImport, { format: "pi-jsonl", content: PI_FILE, cwd: PROJECT }, { title: "A file with a broken line" });
}

/** A second turn, a compaction that keeps it, turn/end, a navigation back and a branch. */
async function compactionAndNavigation(rpc, { sessionId, read, fix }) {
  // The compaction summarizes the first turn and keeps the second.
  await rpc.request(
    P.EntryAppendMany,
    {
      sessionId,
      entries: [
        user("Add a regression test for it.", 100),
        assistant(
          [
            {
              type: "toolCall",
              id: "call_3",
              name: "write",
              arguments: { path: "test/login.test.ts", content: 'it("rejects an empty password", …)' },
            },
          ],
          110,
          "toolUse",
        ),
        toolResult("call_3", "write", "Wrote test/login.test.ts", 111),
        assistant([{ type: "text", text: "Added test/login.test.ts: an empty password gets 401." }], 120),
      ],
    },
    { example: false },
  );
  // Settings for this run only: a session this short would otherwise have nothing to compact.
  const small = { keepRecentTokens: 46 };
  await rpc.request(P.CompactionPrepare, { sessionId, settings: small });
  await rpc.request(P.CompactionRun, {
    sessionId,
    reason: "manual",
    requestId: "compact-0001",
    customInstructions: "Keep the file names.",
    settings: small,
  });
  if (P.CompactionStatusRequest) await rpc.request(P.CompactionStatusRequest, { sessionId, limit: 5 });
  await rpc.request(P.TurnEnd, {
    sessionId,
    contextWindow: 128000,
    assistant: assistant([{ type: "text", text: "Done. The tests pass." }], 40).message,
    requestId: "turn-0001",
  });
  await rpc.request(P.TreeNavigate, { sessionId, targetId: read.entry.id, summarize: true, label: "first attempt" });
  await rpc.request(P.SessionBranch, { sessionId, entryId: fix.leafId });
}

/** An agent that keeps its own sessions (pi with the Base Context extension) asks for summaries only. */
async function statelessSummaries(rpc, { ask, read }) {
  await rpc.request(P.SummarizeCompaction, {
    messagesToSummarize: [ask.entry.message, read.entry.message, toolResult("call_1", "read", LOGIN_TS, 6).message],
    customInstructions: "Keep the file names.",
    firstKeptEntryId: "9c1d5e7f",
    tokensBefore: 48210,
    sessionId: "agent-session-42",
    workDoneToken: "summarize-1",
  });
  await rpc.request(P.SummarizeBranch, { entries: [ask.entry, read.entry], targetId: ask.entry.id, sessionId: "agent-session-42" });
  // A short session: everything fits in the kept part. The previous summary is carried over.
  await rpc.request(
    P.SummarizeCompaction,
    {
      messagesToSummarize: [],
      previousSummary: "## Goal\nMake the login form accept empty passwords.",
      fileOps: { readFiles: ["src/login.ts"], modifiedFiles: [] },
      firstKeptEntryId: "9c1d5e7f",
      sessionId: "agent-session-42",
    },
    { title: "Nothing new to summarize" },
  );
}

/** Settings, plugins, trust, and two errors. */
async function settingsPluginsAndErrors(rpc, sessionId) {
  await rpc.request(P.SettingsGet, { projectDir: PROJECT });
  await rpc.request(P.PluginsList, {});
  await rpc.request(P.PluginsReload, {});
  await rpc.request(P.ProjectTrust, { projectDir: PROJECT, trusted: false });

  await rpc.request(P.SessionGet, { sessionId: "no-such-session" }, { title: "Unknown session" });
  await rpc.request(
    P.EntryAppend,
    { sessionId, entry: { type: "message", message: { role: "narrator", content: "?" } } },
    { title: "Invalid params" },
  );
}

/**
 * A global plugin, so plugins/list has something to show. Self-contained (plugins usually import
 * @base-context/plugin-sdk's definePlugin, which returns this object unchanged); it lets the
 * built-in summarizers work.
 */
function installExamplePlugin(home) {
  const folder = join(home, "plugins", "release-notes");
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, "package.json"),
    `${JSON.stringify({ name: "release-notes", version: "1.0.0", type: "module", baseContext: { apiVersion: 1, main: "index.js" } }, null, 2)}\n`,
  );
  writeFileSync(
    join(folder, "index.js"),
    'export default { name: "release-notes", apiVersion: 1, hooks: { session_before_compact: () => undefined } };\n',
  );
}

/** An agent that offers its own model: the daemon writes its compaction with it (model/complete). */
async function clientModelStory(recorder, { daemonMain, env }) {
  const { client, exited } = P.spawnDaemon({ command: process.execPath, args: [daemonMain, "serve"], env, stderr: "ignore" });
  const rpc = recorder.connection(client, "an agent that offers its model");
  rpc.answer(P.ModelComplete, () => ({
    text: "## Goal\nFix the login form, which accepts an empty password.\n\n## Done\n- Rejected a missing or empty password in src/auth/login.ts (401 invalid_credentials).",
    model: "gpt-4.1-mini",
    usage: { input: 812, output: 46 },
  }));
  await rpc.request(
    P.Initialize,
    {
      protocolVersion: P.PROTOCOL_VERSION,
      processId: 4242,
      clientInfo: { name: "my-agent", version: "1.0.0" },
      projectDir: PROJECT,
      capabilities: { model: { complete: true } },
    },
    { title: "A client that offers its model (model/complete)" },
  );
  await rpc.notify(P.Initialized, {});
  const { session } = await rpc.request(P.SessionCreate, { cwd: PROJECT, name: "Fix the empty-password login" }, { example: false });
  await rpc.request(
    P.EntryAppendMany,
    {
      sessionId: session.id,
      entries: [
        user("The login form accepts an empty password. Find out why and fix it.", 0),
        assistant([{ type: "text", text: "Fixed: a missing or empty password is now rejected with 401 invalid_credentials." }], 30),
        user("Add a regression test for it.", 100),
      ],
    },
    { example: false },
  );
  // Keeps only the last entry (the new question): the first turn is summarized, by the client's model.
  await rpc.request(
    P.CompactionRun,
    { sessionId: session.id, reason: "manual", settings: { keepRecentTokens: 1 } },
    { title: "Written by the client's own model" },
  );
  await rpc.request(P.Shutdown, {}, { example: false });
  await rpc.notify(P.Exit, {});
  await exited;
  client.dispose();
}

/** What only a daemon shared over a socket sends: another client's append. */
async function sharedDaemonStory(recorder, { daemonMain, env, socketPath }) {
  const daemon = spawn(process.execPath, [daemonMain, "serve", "--socket", socketPath], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  daemon.stderr.on("data", (chunk) => (stderr += chunk.toString("utf8")));
  try {
    for (let waited = 0; !existsSync(socketPath); waited += 20) {
      if (waited > 20_000 || daemon.exitCode !== null) throw new Error(`the socket daemon did not start:\n${stderr}`);
      await sleep(20);
    }
    const editor = await connectOverSocket(socketPath);
    const agent = await connectOverSocket(socketPath);
    const editorRpc = recorder.connection(editor.client, "an editor window that has the session open");
    const agentRpc = recorder.connection(agent.client, "the agent");
    for (const [client, name] of [[editor.client, "editor"], [agent.client, "agent"]]) {
      await client.initialize({ processId: 4242, clientInfo: { name } });
    }
    const { session } = await agentRpc.request(P.SessionCreate, { cwd: PROJECT }, { example: false });
    await editorRpc.request(P.SessionGet, { sessionId: session.id }, { example: false });
    await agentRpc.request(P.EntryAppend, { sessionId: session.id, entry: user("Run the tests.", 60) }, { example: false });
    // A round trip on the editor's connection: the notification sent before its reply has arrived.
    await editorRpc.request(P.SessionGet, { sessionId: session.id }, { example: false });
    // The editor's session list: told of the rename by the daemon's next look at the store.
    await editorRpc.request(P.SessionWatch, {});
    await agentRpc.request(P.SessionRename, { sessionId: session.id, name: "Run the tests" }, { example: false });
    for (let waited = 0; !recorder.exchanges.some((e) => e.method === P.SessionDidChange.method); waited += 50) {
      if (waited > 20_000) throw new Error("no session/didChange within 20 s");
      await sleep(50);
    }
    for (const { client, socket } of [editor, agent]) {
      await client.shutdown();
      client.dispose();
      socket.destroy();
    }
  } finally {
    daemon.kill("SIGTERM");
    if (daemon.exitCode === null) await once(daemon, "exit");
  }
}

/** The socket file appears a moment before the daemon accepts connections: retry until it does. */
async function connectOverSocket(path) {
  for (let attempt = 0; ; attempt++) {
    const socket = createConnection(path);
    try {
      await once(socket, "connect");
      return { socket, client: P.connect(socket, socket) };
    } catch (error) {
      socket.destroy();
      if (attempt >= 200) throw error;
      await sleep(50);
    }
  }
}
