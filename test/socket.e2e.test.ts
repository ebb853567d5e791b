/**
 * `base-context serve --socket <path>`: one daemon shared by several clients. Each connection has
 * its own lifecycle; clients that have a session open hear about each other's appends
 * (`entry/didAppend`) and about compactions; one client leaving does not disturb the others; the
 * socket is the owner's alone and is removed when the daemon stops.
 */
import {
  CompactionDidEnd,
  CompactionDidStart,
  CompactionRun,
  connect,
  EntryAppend,
  EntryDidAppend,
  ErrorCodes,
  SessionCreate,
  SessionGet,
  SessionImport,
  SessionList,
  SettingsGet,
  TreeNavigate,
  type BaseContextClient,
  type BranchSummaryEntry,
} from "@base-context/protocol";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { DAEMON_MAIN } from "./support/daemon.js";
import { rpcError } from "./fixtures/e2e.js";
import { tempDirs } from "./support/temp-dir.js";
import { waitFor } from "./support/wait.js";
import { appendAll, assistant, user } from "./fixtures/e2e.js";
import {
  atomicSave,
  compact,
  compactableSession,
  COMPACT_EVERYTHING,
  hookPlugin,
  pluginsRoot,
  waitForPlugin,
  writePlugin,
} from "./support/plugins.js";
import { storeEnvFor } from "./support/engine.js";
import { TEST_NODE } from "./support/test-node.js";

const SAMPLE = join(import.meta.dirname, "..", "examples", "sessions", "refactor-auth.jsonl");

interface SocketDaemon {
  process: ChildProcess;
  path: string;
  home: string;
  stderr(): string;
  exited: Promise<number | null>;
}

interface SocketClient {
  client: BaseContextClient;
  socket: Socket;
  /** Every notification received, in order. */
  notifications: { method: string; params: unknown }[];
}

const dirs = tempDirs();
const daemons: SocketDaemon[] = [];
const clients: SocketClient[] = [];
afterEach(async () => {
  for (const { socket, client } of clients.splice(0)) {
    client.dispose();
    socket.destroy();
  }
  for (const daemon of daemons.splice(0)) {
    daemon.process.kill("SIGKILL");
    await daemon.exited;
  }
});
afterAll(() => dirs.cleanup());

function spawnSocketDaemon(path: string, home: string, env: Record<string, string> = {}): SocketDaemon {
  const child = spawn(TEST_NODE, [DAEMON_MAIN, "serve", "--socket", path], {
    env: { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), OPENAI_API_KEY: "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const daemon = { process: child, path, home, stderr: () => stderr, exited };
  daemons.push(daemon);
  return daemon;
}

async function startSocketDaemon(options: { home?: string; path?: string; env?: Record<string, string> } = {}): Promise<SocketDaemon> {
  const home = options.home ?? dirs.make("bc-socket-");
  const daemon = spawnSocketDaemon(options.path ?? join(home, "daemon.sock"), home, options.env);
  await waitFor(() => daemon.stderr().includes("listening on"), {
    timeoutMs: 20_000,
    message: "the socket daemon did not start listening",
  });
  return daemon;
}

async function connectClient(daemon: SocketDaemon, name: string, initialize = true, projectDir?: string): Promise<SocketClient> {
  const socket = createConnection(daemon.path);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const client = connect(socket, socket);
  const notifications: SocketClient["notifications"] = [];
  client.connection.onNotification((method: string, params: unknown) => {
    notifications.push({ method, params });
  });
  const connected = { client, socket, notifications };
  clients.push(connected);
  if (initialize) await client.initialize({ clientInfo: { name }, ...(projectDir ? { projectDir } : {}) });
  return connected;
}

const userEntry = (text: string) => ({ type: "message" as const, message: { role: "user" as const, content: text } });
const received = (c: SocketClient, method: string) => c.notifications.filter((n) => n.method === method).map((n) => n.params);

describe("serve --socket", () => {
  it("creates the socket readable and writable by its owner only (0600)", async () => {
    const daemon = await startSocketDaemon();
    const stat = statSync(daemon.path);
    expect(stat.isSocket()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o600);
  });

  it("gives each connection its own lifecycle over the same sessions", async () => {
    const daemon = await startSocketDaemon();
    const a = await connectClient(daemon, "a");
    const { session } = await a.client.request(SessionCreate, { cwd: "/project", name: "shared" });

    const b = await connectClient(daemon, "b", false);
    const early = await rpcError(b.client.request(SessionList, {}));
    expect(early.code).toBe(ErrorCodes.ServerNotInitialized);
    const init = await b.client.initialize({ clientInfo: { name: "b" } });
    expect(init.capabilities).toMatchObject({ sharedDaemon: true });
    const listed = await b.client.request(SessionList, {});
    expect(listed.sessions.map((s) => s.id)).toEqual([session.id]);
  });

  it("answers each client for its own project (settings/get without projectDir), even with requests interleaved", async () => {
    const daemon = await startSocketDaemon();
    const projects = ["alpha", "beta"].map((name) => {
      const dir = dirs.make(`bc-socket-${name}-`);
      mkdirSync(join(dir, ".base-context"));
      writeFileSync(
        join(dir, ".base-context", "settings.json"),
        JSON.stringify({ compaction: { keepRecentTokens: name === "alpha" ? 1111 : 2222 } }),
      );
      return dir;
    });
    const a = await connectClient(daemon, "a", true, projects[0]);
    const b = await connectClient(daemon, "b", true, projects[1]);
    const rounds = await Promise.all(
      Array.from({ length: 5 }, () => [a.client.request(SettingsGet, {}), b.client.request(SettingsGet, {})]).flat(),
    );
    expect(rounds.map((view) => view.settings.compaction.keepRecentTokens)).toEqual([
      1111, 2222, 1111, 2222, 1111, 2222, 1111, 2222, 1111, 2222,
    ]);
  });

  it("tells the other clients that have a session open about each other's appends (entry/didAppend)", async () => {
    const daemon = await startSocketDaemon();
    const a = await connectClient(daemon, "a");
    const b = await connectClient(daemon, "b");
    const bystander = await connectClient(daemon, "c");
    const { session } = await a.client.request(SessionCreate, { cwd: "/project" });
    await b.client.request(SessionGet, { sessionId: session.id }); // b opens the session

    const fromA = await a.client.request(EntryAppend, { sessionId: session.id, entry: userEntry("from a") });
    await waitFor(() => received(b, EntryDidAppend.method).length === 1, { message: "b did not hear of a's append" });
    expect(received(b, EntryDidAppend.method)).toEqual([{ sessionId: session.id, entryIds: [fromA.entry.id], leafId: fromA.entry.id }]);

    const fromB = await b.client.request(EntryAppend, { sessionId: session.id, entry: userEntry("from b") });
    await waitFor(() => received(a, EntryDidAppend.method).length === 1, { message: "a did not hear of b's append" });
    expect(received(a, EntryDidAppend.method)).toEqual([{ sessionId: session.id, entryIds: [fromB.entry.id], leafId: fromB.entry.id }]);

    // Nobody hears of their own appends, and a client without the session open hears nothing.
    await bystander.client.request(SessionList, {}); // a round trip: anything sent to it before has arrived
    expect(received(a, EntryDidAppend.method)).toHaveLength(1);
    expect(received(b, EntryDidAppend.method)).toHaveLength(1);
    expect(received(bystander, EntryDidAppend.method)).toEqual([]);
  });

  it("fans out a compaction's notifications, and its entry, to every client that has the session open", async () => {
    const home = dirs.make("bc-socket-");
    writeFileSync(join(home, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 2000 } }));
    const daemon = await startSocketDaemon({ home });
    const a = await connectClient(daemon, "a");
    const b = await connectClient(daemon, "b");
    const { session } = await a.client.request(SessionImport, { format: "pi-jsonl", path: SAMPLE });
    await b.client.request(SessionGet, { sessionId: session.id });

    const result = await a.client.request(CompactionRun, { sessionId: session.id });
    expect(result.status).toBe("committed");
    await waitFor(() => received(b, CompactionDidEnd.method).length === 1 && received(b, EntryDidAppend.method).length === 1, {
      message: "b did not hear of the compaction",
    });
    expect(received(b, CompactionDidStart.method)).toEqual([{ sessionId: session.id, reason: "manual" }]);
    expect(received(b, CompactionDidEnd.method)).toEqual([
      expect.objectContaining({ sessionId: session.id, status: "committed", entryId: result.entry!.id }),
    ]);
    // With the kept part's large tool outputs pruned in the same step, the prune entry comes first.
    const written = [...(result.pruned ? [result.pruned.entryId] : []), result.entry!.id];
    expect(received(b, EntryDidAppend.method)).toEqual([{ sessionId: session.id, entryIds: written, leafId: result.entry!.id }]);
    expect(received(a, CompactionDidEnd.method)).toHaveLength(1);
  });

  it("keeps serving the others when one client disconnects abruptly or says goodbye", async () => {
    const daemon = await startSocketDaemon();
    const a = await connectClient(daemon, "a");
    const b = await connectClient(daemon, "b");
    const { session } = await a.client.request(SessionCreate, { cwd: "/project" });
    await b.client.request(SessionGet, { sessionId: session.id });

    b.socket.destroy(); // no shutdown, no exit: the process died
    const afterCrash = await a.client.request(EntryAppend, { sessionId: session.id, entry: userEntry("still here") });
    expect(afterCrash.entry.id).toMatch(/^[0-9a-f]{8}$/);

    await a.client.shutdown(); // orderly goodbye ends a's connection only
    await waitFor(() => a.socket.closed || a.socket.readableEnded, { message: "the daemon did not close a's connection after exit" });

    const c = await connectClient(daemon, "c");
    const got = await c.client.request(SessionGet, { sessionId: session.id });
    expect(got.entryCount).toBe(1);
    expect(daemon.process.exitCode).toBeNull();
  });

  it("stops on SIGTERM: closes the clients, removes the socket and exits 0", async () => {
    const daemon = await startSocketDaemon();
    const a = await connectClient(daemon, "a");
    const closed = new Promise<void>((resolve) => a.socket.once("close", () => resolve()));
    daemon.process.kill("SIGTERM");
    expect(await daemon.exited).toBe(0);
    await closed;
    expect(existsSync(daemon.path)).toBe(false);
  });

  it("replaces a stale socket left by a daemon that died, but refuses a live one", async () => {
    const home = dirs.make("bc-socket-");
    const first = await startSocketDaemon({ home });
    first.process.kill("SIGKILL");
    await first.exited;
    expect(statSync(first.path).isSocket()).toBe(true); // left behind

    const second = await startSocketDaemon({ home });
    expect(second.stderr()).toContain(`removed a stale socket at ${second.path}`);
    await connectClient(second, "a");

    const third = spawnSocketDaemon(second.path, home);
    expect(await third.exited).toBe(1);
    expect(third.stderr()).toContain(`another daemon is already listening on ${second.path}`);
    await connectClient(second, "b"); // the live one is untouched
  });

  it("refuses a path that exists and is not a socket, and a folder that does not exist (exit 1)", async () => {
    const home = dirs.make("bc-socket-");
    const file = join(home, "not-a-socket");
    writeFileSync(file, "precious");
    const onFile = spawnSocketDaemon(file, home);
    expect(await onFile.exited).toBe(1);
    expect(onFile.stderr()).toContain(`${file} exists and is not a socket; refusing to replace it`);
    expect(statSync(file).isFile()).toBe(true);

    const missing = join(home, "no-such-folder", "daemon.sock");
    const inMissing = spawnSocketDaemon(missing, home);
    expect(await inMissing.exited).toBe(1);
    expect(inMissing.stderr()).toContain(`directory ${join(home, "no-such-folder")} does not exist`);
  });

  it.skipIf(process.getuid?.() === 0)("says so when the folder is not writable (exit 1)", async () => {
    const home = dirs.make("bc-socket-");
    const locked = join(home, "locked");
    mkdirSync(locked, { mode: 0o500 });
    const daemon = spawnSocketDaemon(join(locked, "daemon.sock"), home);
    expect(await daemon.exited).toBe(1);
    expect(daemon.stderr()).toContain(`cannot create the socket in ${locked}: the directory is not writable`);
  });
});

describe("serve --socket with plugins, on sessions whose cwd is a real folder", () => {
  /** A global plugin answering both hooks with text naming its version. */
  const versioned = (version: string) =>
    hookPlugin({
      compact: `const p = event.preparation;
return { compaction: { summary: "compacted by ${version}", firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore } };`,
      tree: `return { summary: { summary: "left behind, by ${version}" } };`,
    });

  async function socketDaemonWithPlugin() {
    const home = dirs.make("bc-socket-");
    writeFileSync(join(home, "settings.json"), JSON.stringify(COMPACT_EVERYTHING));
    const dir = writePlugin(pluginsRoot(home), "versioned", versioned("v1"));
    const daemon = await startSocketDaemon({ home });
    const project = dirs.make("bc-socket-project-"); // exists on disk, as every real session's cwd
    const a = await connectClient(daemon, "a", true, project);
    await waitForPlugin(a.client, "versioned", (info) => info.status === "active");
    return { daemon, project, client: a.client, entry: join(dir, "index.mjs") };
  }

  it("runs a compaction through a plugin (the plugin host starts: no module resolution failure)", async () => {
    const { daemon, project, client } = await socketDaemonWithPlugin();
    const { sessionId } = await compactableSession(client, project);
    const result = await compact(client, sessionId);
    expect(result.status).toBe("committed");
    expect(result.compaction?.summary).toBe("compacted by v1");
    expect(daemon.stderr()).not.toContain("did not start");
  });

  it("summarizes a branch left by tree/navigate with the plugin", async () => {
    const { project, client } = await socketDaemonWithPlugin();
    const { session } = await client.request(SessionCreate, { cwd: project });
    const entries = await appendAll(client, session.id, [
      user("Try Redis."),
      assistant("Redis is set up."),
      user("Measure first."),
      assistant("In-memory wins."),
    ]);
    const result = await client.request(TreeNavigate, { sessionId: session.id, targetId: entries[1]!.id, summarize: true });
    expect(result.status).toBe("moved");
    expect(result.summaryEntry as BranchSummaryEntry).toMatchObject({
      type: "branch_summary",
      fromHook: true,
      summary: "left behind, by v1",
    });
  });

  it("hot-reloads a saved plugin: the next compaction uses the new version", async () => {
    const { project, client, entry } = await socketDaemonWithPlugin();
    atomicSave(entry, versioned("v2")["index.mjs"]!);
    const summary = await waitFor(
      async () => {
        const { sessionId } = await compactableSession(client, project);
        const text = (await compact(client, sessionId)).compaction?.summary;
        return text === "compacted by v2" ? text : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, message: "the saved version did not serve a compaction" },
    );
    expect(summary).toBe("compacted by v2");
  });
});
