/**
 * The extension's one connection to Base Context: a daemon it spawns over stdio, or a shared
 * daemon's socket (`BASE_CONTEXT_SOCKET`). Opened on first use (or warmed at session start),
 * reopened once when the daemon went away, closed when pi ends the session. Every failure is an
 * Error the caller turns into pi's own behaviour with a warning: nothing here may break pi.
 */
import { connect, spawnDaemon, type BaseContextClient } from "@base-context/protocol";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createConnection } from "node:net";
import { dirname, join } from "node:path";

export interface LinkOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Sets up the client before `initialize` (e.g. answering `model/complete`, which offers the capability). */
  readonly prepare: (client: BaseContextClient) => void;
  /** The pi project (its cwd): the daemon applies that project's settings and trusted plugins. */
  readonly projectDir: () => string;
  readonly clientVersion: string;
}

interface Open {
  readonly client: BaseContextClient;
  /** The daemon's name and version, from its `initialize` reply. */
  serverInfo?: { name: string; version: string };
  readonly closed: Promise<void>;
  readonly close: () => Promise<void>;
  /** The daemon's last log lines (spawned daemons), to explain a failure. */
  readonly log: () => string;
}

/** How long the daemon may take to answer `initialize` before pi goes on without it. */
const START_TIMEOUT_MS = 20_000;
const LOG_TAIL_CHARS = 2_000;

export class DaemonLink {
  private open: Promise<Open> | undefined;
  private live: Open | undefined;

  constructor(private readonly options: LinkOptions) {}

  /** Where the daemon is, for messages: the socket path, or the command spawned. */
  describe(): string {
    const socket = this.options.env["BASE_CONTEXT_SOCKET"];
    return socket ? `the daemon at ${socket}` : `the daemon (${daemonCommand(this.options.env).join(" ")})`;
  }

  /** The connected client, opening (or reopening, after the daemon went away) as needed. */
  async client(): Promise<BaseContextClient> {
    this.open ??= this.connect().then(
      (open) => {
        this.live = open;
        void open.closed.then(() => {
          if (this.live === open) {
            this.live = undefined;
            this.open = undefined;
          }
        });
        return open;
      },
      (error: unknown) => {
        this.open = undefined;
        throw error;
      },
    );
    return (await this.open).client;
  }

  /** Whether a connection is open now (without opening one). */
  connected(): boolean {
    return this.live !== undefined;
  }

  /** The connected daemon's name and version (`initialize`), while connected. */
  serverInfo(): { name: string; version: string } | undefined {
    return this.live?.serverInfo;
  }

  /** The daemon's recent stderr, when it was spawned here. */
  log(): string {
    return this.live?.log() ?? "";
  }

  async close(): Promise<void> {
    const open = this.open;
    this.open = undefined;
    this.live = undefined;
    if (!open) return;
    try {
      await (await open).close();
    } catch {
      // Never opened, or already gone: nothing to close.
    }
  }

  private async connect(): Promise<Open> {
    const socket = this.options.env["BASE_CONTEXT_SOCKET"];
    const open = socket ? await overSocket(socket) : spawned(this.options.env);
    try {
      this.options.prepare(open.client);
      const initialized = await withTimeout(
        Promise.race([
          open.client.initialize({
            projectDir: this.options.projectDir(),
            clientInfo: { name: "pi", version: this.options.clientVersion },
          }),
          open.closed.then(() => {
            throw new Error(`${this.describe()} ended before answering initialize${tail(open.log())}`);
          }),
        ]),
        START_TIMEOUT_MS,
        `${this.describe()} did not answer initialize within ${START_TIMEOUT_MS / 1000} s`,
      );
      open.serverInfo = initialized.serverInfo;
      return open;
    } catch (error) {
      await open.close().catch(() => undefined);
      throw error;
    }
  }
}

/** `BASE_CONTEXT_DAEMON` (a script path or a command), else the daemon installed beside the extension, else `base-context` on PATH. */
export function daemonCommand(env: NodeJS.ProcessEnv): string[] {
  const configured = env["BASE_CONTEXT_DAEMON"];
  if (configured) return configured.endsWith(".js") ? [process.execPath, configured, "serve"] : [configured, "serve"];
  try {
    const main = join(dirname(createRequire(import.meta.url).resolve("@base-context/daemon")), "cli", "main.js");
    if (existsSync(main)) return [process.execPath, main, "serve"];
  } catch {
    // Not installed beside the extension: use the one on PATH.
  }
  return ["base-context", "serve"];
}

function spawned(env: NodeJS.ProcessEnv): Open {
  const [command, ...args] = daemonCommand(env);
  const daemon = spawnDaemon({ command: command!, args, env, stderr: "pipe" });
  let log = "";
  // The daemon's log never reaches pi's terminal (it would draw over the TUI): kept for messages.
  daemon.process.stderr?.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-LOG_TAIL_CHARS);
  });
  const closed = new Promise<void>((resolve) => {
    daemon.process.once("error", (error) => {
      log += `\n${error.message}`;
      resolve();
    });
    void daemon.exited.then(() => resolve());
  });
  // A daemon that cannot be spawned must not crash pi with an unhandled stream error.
  daemon.process.stdin?.on("error", () => undefined);
  return {
    client: daemon.client,
    closed,
    log: () => log,
    close: async () => {
      try {
        await withTimeout(daemon.client.shutdown(), 2_000, "shutdown");
      } catch {
        kill(daemon.process);
      }
      await withTimeout(closed, 3_000, "exit").catch(() => kill(daemon.process));
      daemon.client.dispose();
    },
  };
}

async function overSocket(path: string): Promise<Open> {
  const socket = createConnection(path);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", (error) => reject(new Error(`cannot connect to the daemon at ${path}: ${error.message}`)));
  });
  socket.on("error", () => undefined);
  const client = connect(socket, socket);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return {
    client,
    closed,
    log: () => "",
    close: async () => {
      try {
        await withTimeout(client.shutdown(), 2_000, "shutdown");
      } catch {
        // A shared daemon goes on serving its other clients either way.
      }
      client.dispose();
      socket.destroy();
    },
  };
}

function kill(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

function tail(log: string): string {
  const last = log.trim().split("\n").slice(-3).join(" | ");
  return last ? `: ${last}` : "";
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
