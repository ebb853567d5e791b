/**
 * One daemon for one window: `base-context serve` spawned over stdio (the command from the
 * settings), or a connection to a shared `serve --socket` daemon. It is started again, with
 * backoff, when it dies; its log (stderr) goes line by line to `log`; and a failure the user must
 * fix (command not found, store that cannot be opened…) is reported once as a Problem instead of
 * being retried. Handlers registered here are attached to every daemon it starts, so the views
 * keep hearing notifications across restarts. No VS Code API: tested against the real daemon.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, type Socket } from "node:net";
import {
  connect,
  PROTOCOL_VERSION,
  SessionList,
  type BaseContextClient,
  type NotificationDecl,
} from "@base-context/protocol";
import type { z } from "zod";
import { Backoff, type BackoffOptions } from "./backoff.js";
import { problemFor, type Failure, type Problem } from "./problems.js";

export interface DaemonSettings {
  command: string;
  args: readonly string[];
  /** A shared daemon's socket; empty: spawn one over stdio. */
  socket: string;
  env: Readonly<Record<string, string>>;
}

export type DaemonState = "starting" | "running" | "restarting" | "stopped";

export interface DaemonConnectionOptions {
  settings: () => DaemonSettings;
  /** The workspace's first folder: the daemon's project (project settings and plugins). */
  projectDir?: string | undefined;
  clientInfo: { name: string; version: string };
  log: (line: string) => void;
  /** A failure to show the user (each start reports at most one). */
  onProblem: (problem: Problem) => void;
  onState?: (state: DaemonState) => void;
  /** Called with each daemon once it answers (after a restart too): the views load again. */
  onReady?: (client: BaseContextClient) => void | Promise<void>;
  backoff?: BackoffOptions;
  /** The environment the daemon's is built on (default: this process's). */
  baseEnv?: NodeJS.ProcessEnv;
}

interface Running {
  client: BaseContextClient;
  close(): Promise<void>;
}

type Registration = { method: string; handler: (params: never) => void };

/** How long `stop` waits for an orderly shutdown before it kills the process. */
const SHUTDOWN_WAIT_MS = 3000;

export class DaemonConnection {
  private current: Running | undefined;
  private stateValue: DaemonState = "stopped";
  private generation = 0;
  private readonly backoff: Backoff;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly registrations: Registration[] = [];
  private readonly attached = new Map<Registration, { dispose(): void }>();
  private waiters: { resolve: (client: BaseContextClient) => void; reject: (error: Error) => void }[] = [];
  private lastProblem: Problem | undefined;

  constructor(private readonly options: DaemonConnectionOptions) {
    this.backoff = new Backoff(options.backoff);
  }

  get state(): DaemonState {
    return this.stateValue;
  }

  get client(): BaseContextClient | undefined {
    return this.stateValue === "running" ? this.current?.client : undefined;
  }

  /** The running daemon's client; waits while one starts; rejects when there is none (with the problem's text). */
  ready(): Promise<BaseContextClient> {
    const client = this.client;
    if (client) return Promise.resolve(client);
    if (this.stateValue === "stopped") {
      return Promise.reject(new Error(this.lastProblem?.message ?? "The Base Context daemon is not running: run Base Context: Restart Daemon."));
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Starts (or starts again) with a fresh backoff: what the user's Restart does. */
  async restart(): Promise<void> {
    this.backoff.reset();
    await this.stopCurrent();
    this.launch();
  }

  start(): void {
    if (this.stateValue === "stopped") this.launch();
  }

  /** Shuts the daemon down (orderly, then killed after a moment) and starts nothing more. */
  async stop(): Promise<void> {
    await this.stopCurrent();
    this.setState("stopped");
    this.rejectWaiters("The Base Context daemon was stopped.");
  }

  /** Handles a notification from every daemon this connection starts, now and after restarts. */
  onNotification<P extends z.ZodType>(decl: NotificationDecl<string, P>, handler: (params: z.output<P>) => void): { dispose(): void } {
    const registration: Registration = { method: decl.method, handler: handler as (params: never) => void };
    this.registrations.push(registration);
    if (this.current) this.attach(this.current.client, registration);
    return {
      dispose: () => {
        this.registrations.splice(this.registrations.indexOf(registration), 1);
        this.attached.get(registration)?.dispose();
        this.attached.delete(registration);
      },
    };
  }

  private attach(client: BaseContextClient, registration: Registration): void {
    this.attached.get(registration)?.dispose();
    this.attached.set(
      registration,
      client.connection.onNotification(registration.method, registration.handler as (params: unknown) => void),
    );
  }

  private async stopCurrent(): Promise<void> {
    this.generation++;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const running = this.current;
    this.current = undefined;
    if (running) await running.close();
  }

  private launch(): void {
    const generation = ++this.generation;
    this.setState(this.backoff.failures > 0 ? "restarting" : "starting");
    const settings = this.options.settings();
    const startedAt = Date.now();
    const opened =
      settings.socket.length > 0 ? this.openSocket(settings, generation, startedAt) : this.spawnDaemon(settings, generation, startedAt);
    if (!opened) return;
    this.current = opened;
    void this.handshake(opened, generation);
  }

  private async handshake(running: Running, generation: number): Promise<void> {
    try {
      const result = await running.client.initialize({
        clientInfo: this.options.clientInfo,
        ...(this.options.projectDir !== undefined ? { projectDir: this.options.projectDir } : {}),
      });
      if (result.protocolVersion !== PROTOCOL_VERSION) {
        const message = `the daemon speaks protocol version ${result.protocolVersion}, this extension ${PROTOCOL_VERSION}`;
        throw Object.assign(new Error(message), { code: 0, data: { code: "protocol_version" } });
      }
      // A daemon that cannot open its store answers `initialize` and fails every request after it.
      await running.client.request(SessionList, { limit: 1 });
    } catch (error) {
      if (generation !== this.generation) return;
      const { code, message, data } = error as { code?: unknown; message?: string; data?: unknown };
      // A daemon that died or a connection that closed during the handshake is reported by its exit or close
      // (vscode-jsonrpc's own codes -32099..-32096: the message could not be written or read, the connection went).
      if (typeof code !== "number" || (code >= -32099 && code <= -32096)) return;
      await this.stopCurrent();
      this.fail({ kind: "rpc", code, message: message ?? String(error), data });
      return;
    }
    if (generation !== this.generation) return;
    for (const registration of this.registrations) this.attach(running.client, registration);
    this.setState("running");
    this.lastProblem = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.resolve(running.client);
    try {
      await this.options.onReady?.(running.client);
    } catch (error) {
      this.options.log(`[extension] loading the views failed: ${(error as Error).message}`);
    }
  }

  private spawnDaemon(settings: DaemonSettings, generation: number, startedAt: number): Running | undefined {
    const args = [...settings.args, "serve"];
    const commandLine = [settings.command, ...args].join(" ");
    this.options.log(`[extension] starting ${commandLine}`);
    let child: ChildProcess;
    try {
      child = spawn(settings.command, args, {
        cwd: this.options.projectDir,
        env: { ...(this.options.baseEnv ?? process.env), ...settings.env },
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (error) {
      this.fail({ kind: "spawn", command: settings.command, code: (error as NodeJS.ErrnoException).code, message: (error as Error).message });
      return undefined;
    }
    let stderr = "";
    let pending = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) this.options.log(line);
    });
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (generation !== this.generation) return;
      this.current = undefined;
      this.fail({ kind: "spawn", command: settings.command, code: error.code, message: error.message });
    });
    child.once("exit", (code, signal) => {
      if (pending.length > 0) this.options.log(pending);
      if (generation !== this.generation) return;
      this.current = undefined;
      this.died({ kind: "exit", commandLine, code, signal, stderr, ranMs: Date.now() - startedAt });
    });
    // A daemon that dies mid-write leaves an EPIPE here: its exit says what happened.
    child.stdin!.on("error", () => undefined);
    const client = connect(child.stdout!, child.stdin!);
    const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve())));
    return {
      client,
      close: async () => {
        if (child.exitCode === null && child.signalCode === null) {
          await Promise.race([client.shutdown().catch(() => undefined), delay(SHUTDOWN_WAIT_MS)]);
          if (child.exitCode === null) child.kill("SIGTERM");
          await Promise.race([exited, delay(SHUTDOWN_WAIT_MS)]);
          if (child.exitCode === null) child.kill("SIGKILL");
        }
        client.dispose();
      },
    };
  }

  private openSocket(settings: DaemonSettings, generation: number, startedAt: number): Running {
    const path = settings.socket;
    this.options.log(`[extension] connecting to the daemon at ${path}`);
    const socket: Socket = createConnection(path);
    let connected = false;
    socket.once("connect", () => (connected = true));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (generation !== this.generation || connected) return;
      this.current = undefined;
      this.died({ kind: "socket", path, code: error.code, message: error.message }, Date.now() - startedAt);
    });
    socket.once("close", () => {
      if (generation !== this.generation || !connected) return;
      this.current = undefined;
      this.options.log(`[extension] the daemon at ${path} closed the connection`);
      this.died({ kind: "socket", path, code: "ECONNRESET", message: "the daemon closed the connection" }, Date.now() - startedAt);
    });
    const client = connect(socket, socket);
    return {
      client,
      close: async () => {
        if (connected && !socket.destroyed) await Promise.race([client.shutdown().catch(() => undefined), delay(SHUTDOWN_WAIT_MS)]);
        client.dispose();
        socket.destroy();
      },
    };
  }

  /** A daemon died (or could not be reached): start it again after a while, or give up and say why. */
  private died(failure: Failure, ranMs = failure.kind === "exit" ? failure.ranMs : 0): void {
    const problem = problemFor(failure);
    const wait = problem.retry ? this.backoff.next(ranMs) : undefined;
    if (wait === undefined) {
      this.fail(failure);
      return;
    }
    this.options.log(`[extension] ${problem.message} Starting again in ${wait} ms.`);
    this.setState("restarting");
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.launch();
    }, wait);
  }

  private fail(failure: Failure): void {
    // Whatever the failed daemon still reports (an exit after a spawn error) is old news.
    this.generation++;
    const problem = problemFor(failure);
    this.lastProblem = problem;
    this.options.log(`[extension] ${problem.message}`);
    this.setState("stopped");
    this.rejectWaiters(problem.message);
    this.options.onProblem(problem);
  }

  private rejectWaiters(message: string): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.reject(new Error(message));
  }

  private setState(state: DaemonState): void {
    if (this.stateValue === state) return;
    this.stateValue = state;
    this.options.onState?.(state);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
