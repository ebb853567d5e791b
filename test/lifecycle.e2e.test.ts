/**
 * The LSP-style lifecycle of `base-context serve` over real stdio: initialize → work → shutdown →
 * exit, the errors around it, and a stdout that carries protocol frames and nothing else.
 */
import {
  ErrorCodes,
  Exit,
  Initialize,
  PROTOCOL_VERSION,
  SessionCreate,
  SessionImport,
  SessionList,
  Shutdown,
} from "@base-context/protocol";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { DAEMON_MAIN, startDaemon, useDaemon, type TestDaemon } from "./support/daemon.js";
import { rpcError } from "./fixtures/e2e.js";
import { storeEnvFor } from "./support/engine.js";

/**
 * A fresh daemon for one test, shut down when the test ends. The tests that need their own
 * process run concurrently; their timeout allows for many Node processes starting at once on a
 * loaded machine (on a quiet one the whole file takes a few seconds).
 */
const SPAWNING = { timeout: 60_000 };
async function daemon(ctx: TestContext, options: Parameters<typeof startDaemon>[0] = {}): Promise<TestDaemon> {
  const d = await startDaemon(options);
  ctx.onTestFinished(() => d.close());
  return d;
}

/**
 * Resolves with the exit code, or rejects when the process is still running after `ms` (a bound
 * for failure, generous because a loaded machine starts Node slowly; a passing test waits far less).
 */
function exitWithin(d: TestDaemon, ms = 20_000): Promise<number | null> {
  return Promise.race([
    d.exited,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`daemon still running after ${ms} ms`)), ms)),
  ]);
}

describe.concurrent("before initialize", SPAWNING, () => {
  it("answers initialize with serverInfo, the protocol version and its capabilities", async (ctx) => {
    const d = await daemon(ctx, { initialize: false });
    const result = await d.client.request(Initialize, {
      protocolVersion: PROTOCOL_VERSION,
      processId: process.pid,
      clientInfo: { name: "e2e" },
    });
    expect(result.serverInfo.name).toBe("base-context");
    expect(result.serverInfo.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(result.protocolVersion).toBe("1");
    expect(result.capabilities).toMatchObject({ contextFormats: ["native", "openai-chat"], importFormats: ["pi-jsonl", "claude-code-jsonl", "codex-jsonl"] });
  });

  it("refuses every request before initialize with -32002, then serves them once initialized", async (ctx) => {
    const d = await daemon(ctx, { initialize: false });
    const before = await rpcError(d.client.request(SessionList, {}));
    expect(before.code).toBe(ErrorCodes.ServerNotInitialized);
    expect(before.code).toBe(-32002);
    const create = await rpcError(d.client.request(SessionCreate, { cwd: "/x" }));
    expect(create.code).toBe(-32002);

    await d.client.initialize();
    await expect(d.client.request(SessionList, {})).resolves.toEqual({ sessions: [] });
  });

  it("exits when stdin closes even before initialize", async (ctx) => {
    const d = await daemon(ctx, { initialize: false });
    d.process.stdin!.end();
    await expect(exitWithin(d)).resolves.toBe(1);
  });
});

describe.concurrent("shutdown and exit", SPAWNING, () => {
  it("refuses requests after shutdown with -32600 and exits with code 0 on exit", async (ctx) => {
    const d = await daemon(ctx);
    await expect(d.client.request(Shutdown, {})).resolves.toBeNull();
    const after = await rpcError(d.client.request(SessionList, {}));
    expect(after.code).toBe(ErrorCodes.InvalidRequest);
    expect(after.code).toBe(-32600);
    await d.client.notify(Exit, {});
    await expect(exitWithin(d)).resolves.toBe(0);
  });

  it("exits with code 1 on exit without a shutdown first", async (ctx) => {
    const d = await daemon(ctx);
    await d.client.notify(Exit, {});
    await expect(exitWithin(d)).resolves.toBe(1);
  });

  it("exits when stdin closes (code 1 without shutdown)", async (ctx) => {
    const d = await daemon(ctx);
    d.process.stdin!.end();
    await expect(exitWithin(d)).resolves.toBe(1);
  });

  it("exits with code 0 when stdin closes after shutdown", async (ctx) => {
    const d = await daemon(ctx);
    await d.client.request(Shutdown, {});
    d.process.stdin!.end();
    await expect(exitWithin(d)).resolves.toBe(0);
  });
});

// ---- stdout purity ---------------------------------------------------------------------------

interface Frame {
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Parses raw stdout bytes as LSP frames; throws on any byte that is not part of a frame. */
function parseFrames(bytes: Buffer): Frame[] {
  const frames: Frame[] = [];
  let at = 0;
  while (at < bytes.length) {
    const headerEnd = bytes.indexOf("\r\n\r\n", at, "ascii");
    if (headerEnd < 0) throw new Error(`stray bytes on stdout at ${at}: ${JSON.stringify(bytes.subarray(at, at + 80).toString("utf8"))}`);
    const headers: Record<string, string> = {};
    for (const line of bytes.subarray(at, headerEnd).toString("ascii").split("\r\n")) {
      const match = /^([A-Za-z-]+): (.+)$/.exec(line);
      if (!match) throw new Error(`not a frame header at ${at}: ${JSON.stringify(line)}`);
      headers[match[1]!.toLowerCase()] = match[2]!;
    }
    const length = Number(headers["content-length"]);
    if (!Number.isInteger(length) || length <= 0) throw new Error(`frame without a valid Content-Length at ${at}`);
    const start = headerEnd + 4;
    if (start + length > bytes.length) throw new Error(`truncated frame at ${at}: wants ${length} bytes, has ${bytes.length - start}`);
    const body = JSON.parse(bytes.subarray(start, start + length).toString("utf8")) as Record<string, unknown>;
    frames.push({ headers, body });
    at = start + length;
  }
  return frames;
}

const frame = (message: object): Buffer => {
  const json = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message }), "utf8");
  return Buffer.concat([Buffer.from(`Content-Length: ${json.length}\r\n\r\n`, "ascii"), json]);
};

describe.concurrent("signals", SPAWNING, () => {
  it("ignores a Ctrl-C meant for its client (SIGINT without a terminal) and keeps serving", async (ctx) => {
    const d = await daemon(ctx);
    const { session } = await d.client.request(SessionCreate, { cwd: "/home/me/project" });
    d.process.kill("SIGINT");
    // A request sent after the signal is answered: the daemon is still there.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { sessions } = await d.client.request(SessionList, {});
    expect(sessions.map((listed) => listed.id)).toEqual([session.id]);
  });

  it("stops in order on SIGTERM, and the store opens again with what was written", async (ctx) => {
    const d = await daemon(ctx);
    const { session } = await d.client.request(SessionCreate, { cwd: "/home/me/project" });
    d.process.kill("SIGTERM");
    await expect(exitWithin(d)).resolves.toBe(1);
    const reopened = await startDaemon({ home: d.home });
    ctx.onTestFinished(() => reopened.close());
    const { sessions } = await reopened.client.request(SessionList, {});
    expect(sessions.map((listed) => listed.id)).toEqual([session.id]);
  });
});

describe.concurrent("stdout", SPAWNING, () => {
  it("carries nothing but Content-Length frames, even with debug logging and failing requests", async () => {
    const home = mkdtempSync(join(tmpdir(), "bc-e2e-stdout-"));
    const child = spawn(process.execPath, [DAEMON_MAIN, "serve"], {
      env: { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), BASE_CONTEXT_LOG: "debug", OPENAI_API_KEY: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    try {
      const out: Buffer[] = [];
      let err = "";
      child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
      child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

      // A session whose second entry names a parent that is not an earlier line: the import logs a warning.
      const content = [
        JSON.stringify({ type: "session", version: 3, id: "stdout-purity", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" }),
        JSON.stringify({
          type: "message",
          id: "e1",
          parentId: null,
          timestamp: "2026-01-01T00:00:01.000Z",
          message: { role: "user", content: "ünïcödé ✓ — multibyte", timestamp: 1 },
        }),
        JSON.stringify({
          type: "message",
          id: "e2",
          parentId: "later",
          timestamp: "2026-01-01T00:00:02.000Z",
          message: { role: "user", content: "orphan", timestamp: 2 },
        }),
        "{not json",
      ].join("\n");
      const requests = [
        { id: 1, method: "session/list", params: {} }, // before initialize: -32002
        { id: 2, method: "initialize", params: { protocolVersion: "1", processId: process.pid } },
        { method: "initialized", params: {} },
        { id: 3, method: "session/create", params: { cwd: "/p", name: "ü" } },
        { id: 4, method: "session/import", params: { format: "pi-jsonl", content } },
        { id: 5, method: "session/create", params: { cwd: 1 } }, // -32602
        { id: 6, method: "no/such", params: {} }, // -32601
        { id: 7, method: "session/get", params: { sessionId: "missing" } }, // app error
        { id: 8, method: "context/build", params: { sessionId: "stdout-purity", format: "openai-chat" } },
        { id: 9, method: "shutdown" },
      ];
      for (const request of requests) {
        child.stdin.write(frame(request));
        // A frame whose body is not JSON: answered -32700 (id null), and the requests after it still served.
        if (request.id === 3) child.stdin.write(Buffer.from("Content-Length: 5\r\n\r\n{oops", "ascii"));
      }

      // Wait for the shutdown reply before `exit`, as a client would.
      const deadline = Date.now() + 20_000;
      while (!parseFramesSafe(Buffer.concat(out)).some((f) => f.body.id === 9)) {
        if (Date.now() > deadline) throw new Error(`no reply to shutdown; stderr:\n${err}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      child.stdin.write(frame({ method: "exit" }));
      child.stdin.end();
      expect(await exited).toBe(0);

      const frames = parseFrames(Buffer.concat(out));
      for (const f of frames) {
        expect(f.body.jsonrpc).toBe("2.0");
        expect(Object.keys(f.headers).every((h) => h === "content-length" || h === "content-type")).toBe(true);
      }
      const replies = new Map(frames.filter((f) => "id" in f.body && f.body.id !== null).map((f) => [f.body.id, f.body]));
      expect(frames.filter((f) => f.body.id === null)).toMatchObject([
        { body: { error: { code: -32700, data: { code: "parse_error" } } } },
      ]);
      expect([...replies.keys()].sort((a, b) => Number(a) - Number(b))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(replies.get(1)).toMatchObject({ error: { code: -32002 } });
      expect(replies.get(4)).toMatchObject({ result: { entryCount: 2, skippedLines: [{ line: 4 }] } });
      expect(replies.get(5)).toMatchObject({ error: { code: -32602 } });
      expect(replies.get(6)).toMatchObject({ error: { code: -32601 } });
      expect(replies.get(7)).toMatchObject({ error: { code: -31999, data: { code: "session_not_found" } } });
      expect(replies.get(9)).toMatchObject({ result: null });
      // The log went to stderr (and, for warnings, to log/message frames), never raw onto stdout.
      expect(err).toContain("[base-context]");
      expect(err).toMatch(/answered an invalid message from the client: parse error: the message is not JSON/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      rmSync(home, { recursive: true, force: true });
    }
  });
});

function parseFramesSafe(bytes: Buffer): Frame[] {
  // The buffer may end inside a frame while the daemon is still writing: parse the complete ones.
  const frames: Frame[] = [];
  let end = bytes.length;
  for (;;) {
    try {
      return parseFrames(bytes.subarray(0, end));
    } catch {
      const last = bytes.lastIndexOf("Content-Length", end - 1, "ascii");
      if (last <= 0) return frames;
      end = last;
    }
  }
}

describe("an initialized daemon", () => {
  const d = useDaemon();

  it("refuses a second initialize with -32600", async () => {
    const again = await rpcError(d.client.request(Initialize, { protocolVersion: PROTOCOL_VERSION }));
    expect(again.code).toBe(ErrorCodes.InvalidRequest);
  });

  it("answers an unknown method with -32601", async () => {
    const error = await rpcError(d.client.connection.sendRequest("session/teleport", { sessionId: "x" }));
    expect(error.code).toBe(ErrorCodes.MethodNotFound);
    expect(error.code).toBe(-32601);
  });

  it("rejects invalid params with -32602 and lists the zod issues in data", async () => {
    const wrongType = await rpcError(d.client.connection.sendRequest(SessionCreate.method, { cwd: 42 }));
    expect(wrongType.code).toBe(ErrorCodes.InvalidParams);
    expect(wrongType.data?.issues).toEqual([expect.objectContaining({ path: "cwd", code: "invalid_type" })]);

    const missing = await rpcError(d.client.connection.sendRequest("entry/append", { sessionId: "s" }));
    expect(missing.code).toBe(-32602);
    expect(missing.data?.issues?.map((issue) => issue.path)).toContain("entry");

    const badEntry = await rpcError(
      d.client.connection.sendRequest("entry/append", {
        sessionId: "s",
        entry: { type: "message", message: { role: "robot", content: "x" } },
      }),
    );
    expect(badEntry.code).toBe(-32602);
    expect(badEntry.data?.issues?.[0]?.path).toBe("entry.message.role");

    const both = await rpcError(d.client.request(SessionImport, { format: "pi-jsonl", path: "/a.jsonl", content: "{}" }));
    expect(both.code).toBe(-32602);
    expect(both.data?.issues?.[0]?.message).toMatch(/exactly one of `path` or `content`/);
  });

  it("keeps serving after errors: a bad request does not break the connection", async () => {
    await rpcError(d.client.connection.sendRequest("nope", {}));
    await rpcError(d.client.connection.sendRequest(SessionCreate.method, {}));
    await expect(d.client.request(SessionCreate, { cwd: "/still/alive" })).resolves.toMatchObject({ session: { cwd: "/still/alive" } });
  });
});
