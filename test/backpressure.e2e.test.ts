/**
 * A client that sends requests and does not read the replies (docs/guarantees.md, "Protocol and
 * connections"): the daemon stops reading it once `limits.maxQueuedOutputBytes` of output waits,
 * its memory stays bounded, every reply arrives once the client reads, and on a socket daemon the
 * other clients are served meanwhile. How fast they are served then (their `context/build` p99,
 * alone and beside the stall) is `pnpm bench bounded`'s (bench/bounded.mjs), not a timed test's.
 */
import type { ChildProcess } from "node:child_process";
import { constants, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { frame, INITIALIZE, spawnRawSocketDaemon, spawnRawStdio } from "./support/raw-daemon.js";
import { recordScore } from "./adversarial/scoreboard.js";
import { cpuTicks, peakRssBytes, rssBytes, TICKS_PER_SECOND, whenSettled } from "./support/proc-stats.js";
import { tempDirs } from "./support/temp-dir.js";
import { waitFor } from "./support/wait.js";

// The daemons this file starts log at debug level: the line saying a client's output queue is full.
process.env.BASE_CONTEXT_LOG = "debug";
const dirs = tempDirs();
const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) child.kill("SIGKILL");
});
afterAll(() => dirs.cleanup());

const { O_NONBLOCK } = constants;
const REQUESTS = 250;
const REPLY_CHARS = 3 * 1024 * 1024;
/**
 * The daemon's peak RSS bound: 400 MB on Node 20 and 22. Node 24 peaked at 430–450 MB in the same
 * flood (its V8 collects the built replies later); its bound is 480 MB until that is brought down
 * (docs/node-versions.md). Without backpressure the flood took 900 MB and more on every release.
 */
const DAEMON_NODE_MAJOR = Number(process.env.BASE_CONTEXT_TEST_NODE_MAJOR ?? process.versions.node.split(".")[0]);
const MAX_RSS = (DAEMON_NODE_MAJOR >= 24 ? 480 : 400) * 1024 * 1024;

/** Requests made by the other client, before and while one client is stalled. */
const BUILDS = 100;

function home(): string {
  const dir = dirs.make("bc-backpressure-");
  writeFileSync(join(dir, "settings.json"), "{}");
  return dir;
}

/**
 * Reads framed replies from a stream without keeping their bodies whole (a test reading 750 MB
 * must not hold it): each reply's id, its length and its parsed body when it is small.
 */
class LeanReader {
  readonly replies = new Map<unknown, { bytes: number; error: boolean; body?: Record<string, unknown> }>();
  private chunks: Buffer[] = [];
  private buffered = 0;
  private need = -1;

  constructor(readonly stream: Readable) {
    stream.on("data", (chunk: Buffer) => this.take(chunk));
  }

  private take(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      // Joined only when a header is complete or a whole body has arrived: never once per chunk.
      if (this.need < 0) {
        const all = this.join();
        const end = all.indexOf("\r\n\r\n");
        if (end < 0) return;
        this.need = Number(/Content-Length: (\d+)/i.exec(all.subarray(0, end).toString("latin1"))![1]);
        this.chunks = [all.subarray(end + 4)];
        this.buffered = all.length - end - 4;
      }
      if (this.buffered < this.need) return;
      const all = this.join();
      const body = all.subarray(0, this.need);
      // The id is near the start of a reply (`{"jsonrpc":"2.0","id":…` as jsonPieces writes it) or of an error.
      const head = body.subarray(0, 200).toString("utf8");
      if (!head.includes('"method"')) {
        const id = /"id":(\d+|"[^"]*"|null)/.exec(head)?.[1];
        const small = this.need < 64 * 1024 ? (JSON.parse(body.toString("utf8")) as Record<string, unknown>) : undefined;
        const error = /^\{"jsonrpc":"2.0","id":[^,]*,"error"/.test(head);
        this.replies.set(id === undefined ? undefined : JSON.parse(id), { bytes: this.need, error, ...(small ? { body: small } : {}) });
      }
      this.chunks = [all.subarray(this.need)];
      this.buffered = all.length - this.need;
      this.need = -1;
    }
  }

  private join(): Buffer {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!;
  }
}

function send(output: Writable, message: unknown): void {
  output.write(frame(JSON.stringify(message)));
}

/** Sends `message` and waits for its reply (small replies only). */
async function call(output: Writable, reader: LeanReader, id: number, method: string, params: unknown): Promise<Record<string, unknown>> {
  send(output, { jsonrpc: "2.0", id, method, params });
  const reply = await waitFor(() => reader.replies.get(id), { timeoutMs: 20_000, message: `reply ${id} to ${method}` });
  return reply.body ?? (reply.error ? { error: "a large error" } : { result: "a large result" });
}

/** A session whose `session/path` reply is a little over 3 MB: one user entry of 3 MB of text. */
async function bigSession(output: Writable, reader: LeanReader): Promise<string> {
  const created = await call(output, reader, 1, "session/create", { cwd: "/p" });
  const sessionId = (created.result as { session: { id: string } }).session.id;
  const text = "x".repeat(REPLY_CHARS);
  const appended = await call(output, reader, 2, "entry/append", {
    sessionId,
    entry: { type: "message", message: { role: "user", content: text, timestamp: 1 } },
  });
  expect(appended.error).toBeUndefined();
  return sessionId;
}

/** The daemon's debug line when it stops reading a client whose replies wait (server.ts). */
const STALLED = /is not reading its replies \(\d+ KiB of output waiting/;

/**
 * Sends REQUESTS `session/path` requests (ids 1000…) without reading, waits until the daemon says
 * its output queue is full and has gone idle, returns its peak RSS. Idle alone is no proof: a
 * daemon between two requests is idle too, and the peak would then be taken before the flood.
 */
async function floodUnread(pid: number, output: Writable, reader: LeanReader, sessionId: string, stderr: () => string): Promise<number> {
  reader.stream.pause();
  for (let i = 0; i < REQUESTS; i++) send(output, { jsonrpc: "2.0", id: 1000 + i, method: "session/path", params: { sessionId } });
  const started = Date.now();
  const ticksBefore = cpuTicks(pid);
  try {
    await waitFor(() => STALLED.test(stderr()) || undefined, { timeoutMs: 120_000, message: "the daemon's output queue full" });
  } catch (error) {
    // What the daemon was doing: alive or not, how much CPU the flood took, what it said last.
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    const cpu = alive ? `${(cpuTicks(pid) - ticksBefore) / TICKS_PER_SECOND} CPU-s` : "";
    const state = alive ? `alive, ${cpu} in ${Date.now() - started} ms, RSS ${Math.round(rssBytes(pid) / 2 ** 20)} MB` : "exited";
    throw new Error(`${(error as Error).message}; the daemon: ${state}; replies read: ${reader.replies.size}; its last log lines:\n${stderr().slice(-3000)}`);
  }
  await whenSettled(pid, { windowMs: 1000, maxTicks: 5, timeoutMs: 60_000 });
  return peakRssBytes(pid);
}

async function readAll(reader: LeanReader): Promise<void> {
  reader.stream.resume();
  await waitFor(() => (reader.replies.size >= REQUESTS + 3 ? true : undefined), {
    timeoutMs: 120_000,
    message: "every reply once the client reads",
  });
  for (let i = 0; i < REQUESTS; i++) expect(reader.replies.get(1000 + i)?.bytes).toBeGreaterThan(REPLY_CHARS);
}

describe("a client that does not read its replies", { timeout: 240_000 }, () => {
  it("over stdio: the daemon stays under 400 MB and every reply arrives once the client reads", async () => {
    const daemon = spawnRawStdio(home());
    running.push(daemon.process);
    const input = daemon.process.stdin!;
    // The raw daemon's own reader keeps whole copies: this test reads with its own.
    daemon.process.stdout!.removeAllListeners("data");
    const reader = new LeanReader(daemon.process.stdout!);
    expect((await call(input, reader, 0, "initialize", INITIALIZE)).result).toBeDefined();
    const sessionId = await bigSession(input, reader);

    const peak = await floodUnread(daemon.process.pid!, input, reader, sessionId, daemon.stderr);
    expect(reader.replies.size).toBe(3); // nothing of the flood was read yet
    expect(peak).toBeLessThan(MAX_RSS);
    await readAll(reader);
    recordScore({ area: "backpressure (stdio)", scenario: "250 unread 3 MB replies", tried: REQUESTS, survived: REQUESTS, lost: 0 });
  });

  it("over stdio: the protocol's own descriptor stays non-blocking once it has moved off fd 1", async () => {
    // Node clients spawn the daemon with a socket for stdio; the daemon moves the protocol to a
    // copy of it that a helper process sends back (protocol-output.ts). Every copy of a descriptor
    // shares its blocking mode: when the helper got the socket as its own stdout, its start and
    // its exit made the socket blocking, and a reply to a client that was not reading then
    // blocked the whole daemon in write(2) (it hung in this file's stdio test, under load).
    const daemon = spawnRawStdio(home());
    running.push(daemon.process);
    const pid = daemon.process.pid!;
    const protocolSocket = readlinkSync(`/proc/${pid}/fd/1`); // "socket:[inode]", before the move
    expect(protocolSocket).toMatch(/^socket:/);
    daemon.process.stdout!.removeAllListeners("data");
    const reader = new LeanReader(daemon.process.stdout!);
    expect((await call(daemon.process.stdin!, reader, 0, "initialize", INITIALIZE)).result).toBeDefined();
    await waitFor(() => /protocol on its own descriptor/.test(daemon.stderr()) || undefined, { timeoutMs: 20_000, message: "the protocol moved off fd 1" });
    // The helper has exited (its exit was the second change of mode).
    await waitFor(() => readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim() === "" || undefined, { message: "the helper exited" });
    // Descriptors come and go meanwhile (the daemon's own files and pipes): one gone is not a copy.
    const linkOf = (fd: string) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return undefined;
      }
    };
    const copies = readdirSync(`/proc/${pid}/fd`).filter((fd) => fd !== "1" && linkOf(fd) === protocolSocket);
    expect(copies).toHaveLength(1);
    const flags = Number.parseInt(/^flags:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${copies[0]}`, "utf8"))![1]!, 8);
    expect(flags & O_NONBLOCK, `flags ${flags.toString(8)}`).toBe(O_NONBLOCK);
  });

  it("over a socket: one stalled client holds bounded memory while another is served", async () => {
    const daemon = await spawnRawSocketDaemon(home());
    running.push(daemon.process);
    const connect = async (): Promise<{ socket: Socket; reader: LeanReader }> => {
      const socket = createConnection(daemon.path);
      await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
      const reader = new LeanReader(socket);
      expect((await call(socket, reader, 0, "initialize", INITIALIZE)).result).toBeDefined();
      return { socket, reader };
    };
    const stalled = await connect();
    const other = await connect();
    const sessionId = await bigSession(stalled.socket, stalled.reader);
    const small = (await call(other.socket, other.reader, 1, "session/create", { cwd: "/q" })).result as { session: { id: string } };
    await call(other.socket, other.reader, 2, "entry/append", {
      sessionId: small.session.id,
      entry: { type: "message", message: { role: "user", content: "hello", timestamp: 1 } },
    });

    const builds = async (firstId: number): Promise<void> => {
      for (let i = 0; i < BUILDS; i++) {
        const built = await call(other.socket, other.reader, firstId + i, "context/build", { sessionId: small.session.id });
        expect(built.error).toBeUndefined();
      }
    };
    await builds(100);

    const peak = await floodUnread(daemon.process.pid!, stalled.socket, stalled.reader, sessionId, daemon.stderr);
    expect(peak).toBeLessThan(MAX_RSS);
    // The other client is served while the first one's replies wait (still unread: 3 of them read).
    await builds(100 + BUILDS);
    expect(stalled.reader.replies.size).toBe(3);
    await readAll(stalled.reader);
    recordScore({ area: "backpressure (socket)", scenario: "250 unread 3 MB replies, another client served", tried: REQUESTS, survived: REQUESTS, lost: 0 });
    stalled.socket.destroy();
    other.socket.destroy();
  });
});
