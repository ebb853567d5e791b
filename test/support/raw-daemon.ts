/**
 * The built daemon spoken to in raw bytes, over stdio or a socket, for tests that send what a
 * well-behaved client never would (malformed frames, invalid JSON-RPC). Replies are parsed from
 * the byte stream as they arrive; the end of the stream (the daemon closed the connection, or
 * exited) is a promise.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, type Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import { DAEMON_MAIN } from "./daemon.js";
import { waitFor } from "./wait.js";
import { storeEnvFor } from "./engine.js";
import { TEST_NODE } from "./test-node.js";

export interface Reply {
  id?: unknown;
  method?: string;
  result?: unknown;
  error?: { code: number; message: string; data?: { code?: string; [key: string]: unknown } };
  [key: string]: unknown;
}

/** One byte stream to the daemon and back. */
export class RawConnection {
  readonly replies: Reply[] = [];
  /** Resolves when the daemon's side of the stream ends (closed or exited). */
  readonly ended: Promise<void>;
  private isEnded = false;
  private pending = Buffer.alloc(0);

  constructor(
    private readonly input: Writable,
    output: Readable,
  ) {
    output.on("data", (chunk: Buffer) => this.take(chunk));
    this.ended = new Promise((resolve) => {
      const done = () => {
        this.isEnded = true;
        resolve();
      };
      output.once("end", done);
      output.once("close", done);
    });
    // The daemon closing first makes later writes fail; the test looks at `ended` instead.
    input.on("error", () => undefined);
    output.on("error", () => undefined);
  }

  /** Replies only (no notifications such as log/message). */
  responses(): Reply[] {
    return this.replies.filter((reply) => reply.method === undefined);
  }

  get closed(): boolean {
    return this.isEnded;
  }

  /** Writes bytes as they are. */
  write(bytes: string | Buffer): void {
    if (!this.input.destroyed && !this.input.writableEnded) this.input.write(bytes);
  }

  /** Writes one well-framed message. */
  send(message: unknown): void {
    this.write(frame(JSON.stringify(message)));
  }

  /** Ends the client's side (no more bytes will come). */
  end(): void {
    if (!this.input.destroyed && !this.input.writableEnded) this.input.end();
  }

  /** The reply with this id, once it has arrived. */
  async reply(id: unknown, timeoutMs = 10_000): Promise<Reply> {
    return waitFor(() => this.replies.find((reply) => reply.id === id && reply.method === undefined), {
      timeoutMs,
      message: `a reply to request ${JSON.stringify(id)}`,
    });
  }

  /** Sends a request and waits for its reply. */
  async request(id: string | number, method: string, params: unknown = {}): Promise<Reply> {
    this.send({ jsonrpc: "2.0", id, method, params });
    return this.reply(id);
  }

  private take(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    for (;;) {
      const end = this.pending.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(this.pending.subarray(0, end).toString("latin1"))?.[1]);
      if (this.pending.length < end + 4 + length) return;
      this.replies.push(JSON.parse(this.pending.subarray(end + 4, end + 4 + length).toString("utf8")) as Reply);
      this.pending = this.pending.subarray(end + 4 + length);
    }
  }
}

export function frame(body: string | Buffer, length?: number): Buffer {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return Buffer.concat([Buffer.from(`Content-Length: ${length ?? bytes.length}\r\n\r\n`, "latin1"), bytes]);
}

export interface RawStdioDaemon {
  process: ChildProcess;
  connection: RawConnection;
  stderr(): string;
  exitCode: Promise<number | null>;
}

/** `base-context serve` over stdio with BASE_CONTEXT_HOME=home; not yet initialized. */
export function spawnRawStdio(home: string): RawStdioDaemon {
  const child = spawn(TEST_NODE, [DAEMON_MAIN, "serve"], {
    env: { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), OPENAI_API_KEY: "" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exitCode = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { process: child, connection: new RawConnection(child.stdin!, child.stdout!), stderr: () => stderr, exitCode };
}

/** A raw connection to a daemon listening on `path`. */
export async function connectRaw(path: string): Promise<{ socket: Socket; connection: RawConnection }> {
  const socket = createConnection(path);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return { socket, connection: new RawConnection(socket, socket) };
}

export const INITIALIZE = { protocolVersion: "1" };

/**
 * Sockets a process holds open (Linux: /proc/<pid>/fd links to "socket:[…]"), or undefined where
 * /proc is not there. Sockets only: a daemon opens other descriptors (watchers, worker threads,
 * database files) at times of its own choosing.
 */
export async function openSockets(pid: number): Promise<number | undefined> {
  const { readdirSync, readlinkSync } = await import("node:fs");
  let names: string[];
  try {
    names = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  let sockets = 0;
  for (const name of names) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${name}`).startsWith("socket:")) sockets++;
    } catch {
      // Closed while we looked.
    }
  }
  return sockets;
}

export interface RawSocketDaemon {
  process: ChildProcess;
  path: string;
  stderr(): string;
  exitCode: Promise<number | null>;
}

/** `base-context serve --socket <home>/daemon.sock`, once it listens. */
export async function spawnRawSocketDaemon(home: string): Promise<RawSocketDaemon> {
  const path = `${home}/daemon.sock`;
  const child = spawn(TEST_NODE, [DAEMON_MAIN, "serve", "--socket", path], {
    env: { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), OPENAI_API_KEY: "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exitCode = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await waitFor(() => stderr.includes("listening on") || child.exitCode !== null, {
    timeoutMs: 20_000,
    message: "the socket daemon did not start listening",
  });
  if (child.exitCode !== null) throw new Error(`the socket daemon exited: ${stderr}`);
  return { process: child, path, stderr: () => stderr, exitCode };
}
