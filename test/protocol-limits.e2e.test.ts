/**
 * The protocol's edges through the built daemon (docs/guarantees.md, "Protocol and connections"):
 * limits on messages, entries and nesting; JSON-RPC 2.0 error replies to what is not a request;
 * a request id reused while in flight; an unreadable frame closing its connection (stdio: the
 * daemon exits 1) and no other; broken socket connections releasing their file descriptors.
 */
import { EntryAppend, EntryAppendMany, ErrorCodes, SessionCreate, SessionGet, SessionImport, TurnEnd } from "@base-context/protocol";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { rpcError, user } from "./fixtures/e2e.js";
import { startDaemon, type TestDaemon } from "./support/daemon.js";
import {
  connectRaw,
  frame,
  INITIALIZE,
  openSockets,
  spawnRawSocketDaemon,
  spawnRawStdio,
  type RawSocketDaemon,
  type RawStdioDaemon,
} from "./support/raw-daemon.js";
import { tempDirs } from "./support/temp-dir.js";
import { waitFor } from "./support/wait.js";

const dirs = tempDirs();
const running: { process: { kill(signal: NodeJS.Signals): boolean }; exitCode: Promise<number | null> }[] = [];
const closeable: TestDaemon[] = [];
afterEach(async () => {
  for (const daemon of running.splice(0)) {
    daemon.process.kill("SIGKILL");
    await daemon.exitCode;
  }
  for (const d of closeable.splice(0)) await d.close();
});
afterAll(() => dirs.cleanup());

function homeWith(settings: Record<string, unknown> = {}): string {
  const home = dirs.make("bc-limits-");
  writeFileSync(join(home, "settings.json"), JSON.stringify(settings));
  return home;
}

async function stdioDaemon(settings: Record<string, unknown> = {}): Promise<RawStdioDaemon> {
  const daemon = spawnRawStdio(homeWith(settings));
  running.push(daemon);
  expect((await daemon.connection.request(0, "initialize", INITIALIZE)).result).toBeDefined();
  return daemon;
}

async function socketDaemon(settings: Record<string, unknown> = {}): Promise<RawSocketDaemon> {
  const daemon = await spawnRawSocketDaemon(homeWith(settings));
  running.push(daemon);
  return daemon;
}

const nested = (levels: number) => `${'{"d":'.repeat(levels)}1${"}".repeat(levels)}`;

describe("limits", () => {
  it("refuses an entry over limits.maxEntryBytes on entry/append, entry/appendMany and turn/end, writing nothing", async () => {
    const d = await startDaemon({ home: homeWith({ limits: { maxEntryBytes: 4096 } }) });
    closeable.push(d);
    const { session } = await d.client.request(SessionCreate, { cwd: "/p" });
    await d.client.request(EntryAppend, { sessionId: session.id, entry: user("small") });
    const big = "x".repeat(5000);

    const one = await rpcError(d.client.request(EntryAppend, { sessionId: session.id, entry: user(big) }));
    expect(one).toMatchObject({ code: ErrorCodes.InvalidParams, data: { code: "entry_too_large", maxEntryBytes: 4096 } });
    expect(one.message).toContain("limits.maxEntryBytes");
    const many = await rpcError(d.client.request(EntryAppendMany, { sessionId: session.id, entries: [user("fits"), user(big)] }));
    expect(many).toMatchObject({ code: ErrorCodes.InvalidParams, data: { code: "entry_too_large", index: 1 } });
    const turn = await rpcError(
      d.client.request(TurnEnd, {
        sessionId: session.id,
        contextWindow: 100_000,
        assistant: {
          role: "assistant",
          content: [{ type: "text", text: big }],
          api: "x",
          provider: "x",
          model: "x",
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
          stopReason: "stop",
          timestamp: 1,
        },
      }),
    );
    expect(turn).toMatchObject({ code: ErrorCodes.InvalidParams, data: { code: "entry_too_large" } });
    expect((await d.client.request(SessionGet, { sessionId: session.id })).entryCount).toBe(1);
  });

  it("skips an imported entry over limits.maxEntryBytes, saying why, and imports the others", async () => {
    const d = await startDaemon({ home: homeWith({ limits: { maxEntryBytes: 4096 } }) });
    closeable.push(d);
    const line = (id: string, parentId: string | null, text: string) =>
      JSON.stringify({
        type: "message",
        id,
        parentId,
        timestamp: "2026-01-01T00:00:01.000Z",
        message: { role: "user", content: text, timestamp: 1 },
      });
    const content = [
      JSON.stringify({ type: "session", version: 3, id: "big-import", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" }),
      line("e1", null, "small"),
      line("e2", "e1", "x".repeat(5000)),
      line("e3", "e1", "also small"),
    ].join("\n");
    const result = await d.client.request(SessionImport, { format: "pi-jsonl", content });
    expect(result.entryCount).toBe(2);
    expect(result.skippedLines).toEqual([
      { line: 3, reason: "the entry is larger than the largest accepted (4096 bytes, setting limits.maxEntryBytes)" },
    ]);
  });

  it("refuses params nested deeper than 128 levels with -32602 nesting_too_deep, and serves on", async () => {
    const { connection } = await stdioDaemon();
    await connection.request(1, "session/create", { cwd: "/p", id: "deep" });
    const entry = `{"type":"custom","customType":"x","data":${nested(5000)}}`;
    connection.write(frame(`{"jsonrpc":"2.0","id":2,"method":"entry/append","params":{"sessionId":"deep","entry":${entry}}}`));
    connection.write(frame(`{"jsonrpc":"2.0","id":3,"method":"entry/appendMany","params":{"sessionId":"deep","entries":[${entry}]}}`));
    for (const id of [2, 3]) {
      const reply = await connection.reply(id);
      expect(reply.error).toMatchObject({ code: -32602, data: { code: "nesting_too_deep", maxDepth: 128 } });
    }
    const shallow = `{"type":"custom","customType":"x","data":${nested(100)}}`;
    connection.write(frame(`{"jsonrpc":"2.0","id":4,"method":"entry/append","params":{"sessionId":"deep","entry":${shallow}}}`));
    expect((await connection.reply(4)).result).toMatchObject({ entry: { type: "custom" } });
  });

  it("refuses a message over limits.maxMessageBytes at its header, says so, and (stdio) exits 1", async () => {
    const daemon = await stdioDaemon({ limits: { maxMessageBytes: 4096 } });
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: { cwd: "x".repeat(5000) } });
    daemon.connection.write(frame(big));
    expect(await daemon.exitCode).toBe(1);
    expect(daemon.connection.responses()).toMatchObject([
      { id: 0 },
      { id: null, error: { code: -32600, data: { code: "message_too_large" } } },
    ]);
    expect(daemon.stderr()).toContain(
      `message of ${Buffer.byteLength(big)} bytes refused: the largest accepted is 4096 bytes (setting limits.maxMessageBytes)`,
    );
  });

  it("refuses a 2^40-byte Content-Length before reading the body, over a socket too: that connection closes, others go on", async () => {
    const daemon = await socketDaemon();
    const bystander = await connectRaw(daemon.path);
    await bystander.connection.request(0, "initialize", INITIALIZE);
    const { connection } = await connectRaw(daemon.path);
    connection.write(`Content-Length: ${2 ** 40}\r\n\r\n${"y".repeat(100_000)}`);
    await connection.ended;
    expect(connection.responses()).toMatchObject([{ id: null, error: { code: -32600, data: { code: "message_too_large" } } }]);
    expect((await bystander.connection.request(1, "session/list", {})).result).toBeDefined();
    // Logged for the daemon's owner, not broadcast to the other clients.
    expect(daemon.stderr()).toMatch(
      /protocol error from socket client \d+, closing the connection: message of 1099511627776 bytes refused/,
    );
    expect(bystander.connection.replies.filter((reply) => reply.method === "log/message")).toEqual([]);
  });
});

describe("JSON-RPC 2.0 error replies", () => {
  it("answers a body that is not JSON with -32700 and anything but a request with -32600, id null, and serves on", async () => {
    const { connection } = await stdioDaemon();
    const bodies = [
      "{not json",
      "[]",
      '[{"jsonrpc":"2.0","id":5,"method":"session/list"}]',
      "42",
      '"hi"',
      "null",
      '{"jsonrpc":"2.0","id":6,"method":5}',
    ];
    for (const body of [
      ...bodies,
      '{"jsonrpc":"2.0","id":true,"method":"session/list"}',
      '{"jsonrpc":"2.0","id":{},"method":"session/list"}',
      '{"jsonrpc":"2.0","id":[7],"method":"session/list"}',
    ]) {
      connection.write(frame(body));
    }
    expect((await connection.request(8, "session/list", {})).result).toBeDefined();
    const errors = connection.replies.filter((reply) => reply.error !== undefined);
    expect(errors.map((reply) => [reply.error!.code, reply.error!.data?.code])).toEqual([
      [-32700, "parse_error"],
      ...Array.from({ length: 9 }, () => [-32600, "invalid_request"]),
    ]);
    // Only a request whose id could be read is answered with it ("method": 5 has id 6).
    expect(errors.map((reply) => reply.id)).toEqual([null, null, null, null, null, null, 6, null, null, null]);
  });

  it("refuses a second request with the id of one in flight (duplicate_request_id); the first is stored", async () => {
    const { connection } = await stdioDaemon();
    await connection.request(1, "session/create", { cwd: "/p", id: "dup" });
    const append = (text: string) => ({
      jsonrpc: "2.0",
      id: 2,
      method: "entry/append",
      params: { sessionId: "dup", entry: { type: "message", message: { role: "user", content: text } } },
    });
    connection.write(Buffer.concat([frame(JSON.stringify(append("first"))), frame(JSON.stringify(append("second")))]));
    await waitFor(() => connection.replies.filter((reply) => reply.id === 2).length === 2, { message: "two replies with id 2" });
    const replies = connection.replies.filter((reply) => reply.id === 2);
    expect(replies.find((reply) => reply.error)?.error).toMatchObject({ code: -32600, data: { code: "duplicate_request_id" } });
    expect(replies.find((reply) => reply.result)?.result).toMatchObject({ entry: { message: { content: "first" } } });
    const path = await connection.request(3, "session/path", { sessionId: "dup" });
    expect((path.result as { entries: { message: { content: string } }[] }).entries.map((entry) => entry.message.content)).toEqual([
      "first",
    ]);
  });
});

describe("unreadable frames", () => {
  it("over stdio: answers, logs one clear line and exits 1", async () => {
    const daemon = await stdioDaemon();
    daemon.connection.write("Content-Length: abc\r\n\r\n{}");
    expect(await daemon.exitCode).toBe(1);
    expect(daemon.connection.responses().at(-1)).toMatchObject({ id: null, error: { code: -32600, data: { code: "invalid_frame" } } });
    expect(daemon.stderr()).toContain(
      'protocol error from the client, closing the connection: Content-Length must be a number of bytes, got "abc"',
    );
  });

  it("over a socket: closes that connection only, and broken connections release their file descriptors", async () => {
    const daemon = await socketDaemon();
    const bystander = await connectRaw(daemon.path);
    await bystander.connection.request(0, "initialize", INITIALIZE);
    const before = await openSockets(daemon.process.pid!);

    const broken = [
      "Content-Length: abc\r\n\r\n{}",
      "Content-Length: -1\r\n\r\n{}",
      "Content-Length: 2\n\n{}",
      `X: ${"h".repeat(9000)}`,
      "Content-Length: 1000\r\n\r\n{half", // then the client vanishes mid-frame
    ];
    for (let round = 0; round < 20; round++) {
      await Promise.all(
        broken.map(async (bytes, index) => {
          const { socket, connection } = await connectRaw(daemon.path);
          connection.write(bytes);
          if (index === broken.length - 1) socket.destroy(); // reset, no goodbye
          else await connection.ended; // the daemon closed it
        }),
      );
    }
    expect((await bystander.connection.request(1, "session/list", {})).result).toBeDefined();
    if (before !== undefined) {
      await waitFor(async () => ((await openSockets(daemon.process.pid!)) ?? 0) <= before, {
        timeoutMs: 10_000,
        message: `the daemon's open file descriptors back to ${before}`,
      });
    }
  });
});
