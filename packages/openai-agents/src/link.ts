/**
 * The connection to a daemon: spawned over stdio (`base-context serve`) or a shared one over its
 * Unix socket (`serve --socket`). Every request fails with a clear error once the daemon is gone,
 * including the ones already waiting for an answer, and the link says so at once (`onGone`): a run
 * whose daemon died ends with an error, never waits. A daemon's refusals become this package's
 * `BaseContextError`s.
 */
import { createConnection } from "node:net";
import { connect, spawnDaemon, type BaseContextClient, type RequestDecl } from "@base-context/protocol";
import type { z } from "zod";
import { daemonError, DaemonGoneError } from "./errors.js";

export type DaemonOptions =
  /** Spawn the daemon: `command args…` (default `base-context serve`), with `env` and `cwd`. */
  | { command?: string; args?: string[]; env?: NodeJS.ProcessEnv; cwd?: string }
  /** Connect to a daemon started with `base-context serve --socket <path>`. */
  | { socket: string };

const LOG_TAIL_CHARS = 2000;
/**
 * How long the end of a spawned daemon's output waits for its exit, so the error names the code or
 * signal (the exit follows within milliseconds; a daemon that closed its output and lives on is
 * reported as such).
 */
const EXIT_AFTER_OUTPUT_MS = 250;

export class DaemonLink {
  private goneError: DaemonGoneError | undefined;
  private readonly waiting = new Set<(error: DaemonGoneError) => void>();
  private readonly goneListeners = new Set<(error: DaemonGoneError) => void>();
  private log = "";

  private constructor(
    readonly client: BaseContextClient,
    private readonly closeTransport: () => void,
    private readonly describe: string,
  ) {}

  static async open(
    options: DaemonOptions,
    prepare: (client: BaseContextClient) => void,
    onGone: (error: DaemonGoneError) => void,
  ): Promise<DaemonLink> {
    const link = "socket" in options ? await DaemonLink.overSocket(options.socket) : DaemonLink.spawned(options);
    link.goneListeners.add(onGone);
    prepare(link.client);
    await link.request(
      { method: "initialize" } as never,
      undefined as never,
      () => link.client.initialize({ clientInfo: { name: "@base-context/openai-agents" }, projectDir: process.cwd() }),
    );
    return link;
  }

  private static spawned(options: Exclude<DaemonOptions, { socket: string }>): DaemonLink {
    const command = options.command ?? "base-context";
    const daemon = spawnDaemon({
      command,
      args: options.args ?? ["serve"],
      env: options.env ?? process.env,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      stderr: "pipe",
    });
    const link = new DaemonLink(daemon.client, () => daemon.process.stdin?.end(), `the daemon (${command})`);
    daemon.process.stderr?.on("data", (chunk: Buffer) => {
      link.log = (link.log + chunk.toString("utf8")).slice(-LOG_TAIL_CHARS);
    });
    daemon.process.on("error", (error) => link.gone(`could not start: ${error.message}`));
    daemon.process.once("exit", (exitCode, signal) => {
      link.gone(signal !== null ? `was killed by ${signal}` : `exited with code ${exitCode ?? "null"}`, { exitCode, signal });
    });
    // Its output ends first (a write to its input may already have failed): the exit, which names
    // the code or signal, follows at once; a daemon that only closed its output is gone too.
    daemon.process.stdout?.once("end", () => {
      setTimeout(() => link.gone("closed its output"), EXIT_AFTER_OUTPUT_MS).unref();
    });
    return link;
  }

  private static async overSocket(path: string): Promise<DaemonLink> {
    const socket = createConnection(path);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", (error) => reject(new DaemonGoneError(`cannot connect to the daemon at ${path}: ${error.message}`)));
    });
    socket.on("error", () => undefined);
    const link = new DaemonLink(connect(socket, socket), () => socket.end(), `the daemon at ${path}`);
    socket.once("end", () => link.gone("closed the connection"));
    socket.once("close", () => link.gone("closed the connection"));
    return link;
  }

  private gone(how: string, exit: ConstructorParameters<typeof DaemonGoneError>[1] = {}): void {
    if (this.goneError) return;
    const tail = this.log.trim() ? `\n${this.log.trim().split("\n").slice(-5).join("\n")}` : "";
    this.goneError = new DaemonGoneError(`${this.describe} ${how}${tail}`, exit);
    for (const reject of this.waiting) reject(this.goneError);
    this.waiting.clear();
    this.client.dispose();
    for (const listener of this.goneListeners) listener(this.goneError);
    this.goneListeners.clear();
  }

  /**
   * A request that fails with DaemonGoneError when the daemon is or goes away before answering,
   * and with a BaseContextError (`daemon_error`) when the daemon refuses it.
   */
  request<P extends z.ZodType, R extends z.ZodType>(
    decl: RequestDecl<string, P, R>,
    params: z.input<P>,
    send: () => Promise<z.output<R>> = () => this.client.request(decl, params),
  ): Promise<z.output<R>> {
    if (this.goneError) return Promise.reject(this.goneError);
    return new Promise((resolve, reject) => {
      this.waiting.add(reject);
      // A write to a daemon that just went fails with the socket's own words: report the daemon's end instead.
      send()
        .then(resolve, (error: unknown) => reject(this.goneError ?? daemonError(error, decl.method) ?? error))
        .finally(() => this.waiting.delete(reject));
    });
  }

  /** Ends the connection in order (`shutdown` + `exit`); a spawned daemon then exits. */
  async close(): Promise<void> {
    if (this.goneError) return;
    // Closing is no death: the session's signal is for a daemon that went away by itself.
    this.goneListeners.clear();
    try {
      await this.request({ method: "shutdown" } as never, undefined as never, () => this.client.shutdown().then(() => null));
    } finally {
      this.closeTransport();
      this.gone("was closed");
    }
  }
}
