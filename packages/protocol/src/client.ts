/**
 * Typed Node client: `connect(readable, writable)` over any stream pair (in-memory duplex in
 * tests), `spawnDaemon()` to start `base-context serve` as a child process and talk over stdio.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import {
  CancellationTokenSource,
  ResponseError,
  type CancellationToken,
  type MessageConnection,
  type ProgressType,
} from "vscode-jsonrpc/node";
import type { z } from "zod";
import type { NotificationDecl, RequestDecl } from "./declare.js";
import { ErrorCodes } from "./errors.js";
import { Initialize, PROTOCOL_VERSION, Shutdown, Exit, Initialized } from "./methods/lifecycle.js";
import { ModelComplete } from "./methods/model.js";
import { createStreamConnection } from "./transport/stream-transport.js";

export interface RequestOptions {
  /** Abort the request: sends `$/cancelRequest` to the daemon. */
  signal?: AbortSignal;
}

/** Throw it from an `onRequest` handler to answer with this code, message and `data`. */
export { ResponseError };

/** A handler for a request the daemon sends (`model/complete`). */
export type RequestHandler<P extends z.ZodType, R extends z.ZodType> = (
  params: z.output<P>,
  /**
   * Aborted when the daemon sends `$/cancelRequest` for this request (the work it served was
   * cancelled). A request cancelled before its handler could start never reaches the handler.
   */
  signal: AbortSignal,
) => z.input<R> | Promise<z.input<R>>;

export class BaseContextClient {
  private readonly answering = new Set<string>();

  constructor(readonly connection: MessageConnection) {}

  request<P extends z.ZodType, R extends z.ZodType>(
    decl: RequestDecl<string, P, R>,
    params: z.input<P>,
    options: RequestOptions = {},
  ): Promise<z.output<R>> {
    const { signal } = options;
    if (!signal) return this.connection.sendRequest(decl.method, params) as Promise<z.output<R>>;
    const source = new CancellationTokenSource();
    const onAbort = () => source.cancel();
    if (signal.aborted) source.cancel();
    else signal.addEventListener("abort", onAbort, { once: true });
    return (this.connection.sendRequest(decl.method, params, source.token) as Promise<z.output<R>>).finally(() => {
      signal.removeEventListener("abort", onAbort);
      source.dispose();
    });
  }

  notify<P extends z.ZodType>(decl: NotificationDecl<string, P>, params: z.input<P>): Promise<void> {
    return this.connection.sendNotification(decl.method, params);
  }

  onNotification<P extends z.ZodType>(
    decl: NotificationDecl<string, P>,
    handler: (params: z.output<P>) => void,
  ): { dispose(): void } {
    return this.connection.onNotification(decl.method, handler as (params: unknown) => void);
  }

  /**
   * Answers a request the daemon sends (see `ModelComplete`). Params are checked against the
   * declaration (invalid → -32602); a thrown error reaches the daemon as an error reply (a
   * `ResponseError` as is, anything else as -32603 with its message). The handler's signal aborts
   * on the daemon's `$/cancelRequest`; a request cancelled before it was handled (the cancel read
   * while the request still waited in the queue) is answered -32800 without calling the handler,
   * so the model is never asked for work nobody waits for. Registering a `model/complete` handler
   * before `initialize` also offers the capability there (`capabilities.model.complete: true`),
   * unless the call names `capabilities.model` itself.
   */
  onRequest<P extends z.ZodType, R extends z.ZodType>(decl: RequestDecl<string, P, R>, handler: RequestHandler<P, R>): { dispose(): void } {
    this.answering.add(decl.method);
    const registration = this.connection.onRequest(decl.method, async (raw: unknown, token: CancellationToken) => {
      const parsed = decl.params.safeParse(raw);
      if (!parsed.success) {
        throw new ResponseError(
          ErrorCodes.InvalidParams,
          `invalid params for ${decl.method}: ${parsed.error.issues.map((issue) => issue.message).join("; ")}`,
        );
      }
      // A cancel read while the request still waited in the queue leaves vscode-jsonrpc's shared
      // `CancellationToken.Cancelled` here, whose onCancellationRequested never fires: subscribing
      // alone would hand the handler a signal that never aborts.
      if (token.isCancellationRequested) {
        throw new ResponseError(ErrorCodes.RequestCancelled, `${decl.method} was cancelled before it was handled`, { code: "cancelled" });
      }
      const controller = new AbortController();
      const subscription = token.onCancellationRequested(() => controller.abort());
      try {
        return await handler(parsed.data, controller.signal);
      } catch (error) {
        if (error instanceof ResponseError) throw error;
        throw new ResponseError(ErrorCodes.InternalError, error instanceof Error ? error.message : String(error));
      } finally {
        subscription.dispose();
      }
    });
    return {
      dispose: () => {
        this.answering.delete(decl.method);
        registration.dispose();
      },
    };
  }

  onProgress<T>(token: string | number, handler: (value: T) => void): { dispose(): void } {
    const type = { __: undefined } as unknown as ProgressType<T>;
    return this.connection.onProgress(type, token, handler);
  }

  /** `initialize` + `initialized`, the handshake every session starts with. */
  async initialize(params: Partial<z.input<typeof Initialize.params>> = {}): Promise<z.output<typeof Initialize.result>> {
    const offersModel = this.answering.has(ModelComplete.method) && params.capabilities?.model === undefined;
    const result = await this.request(Initialize, {
      protocolVersion: PROTOCOL_VERSION,
      processId: process.pid,
      ...params,
      ...(offersModel ? { capabilities: { ...params.capabilities, model: { complete: true } } } : {}),
    });
    await this.notify(Initialized, {});
    return result;
  }

  /** `shutdown` + `exit`, the orderly goodbye. */
  async shutdown(): Promise<void> {
    await this.request(Shutdown, {});
    await this.notify(Exit, {});
  }

  dispose(): void {
    this.connection.dispose();
  }
}

export function connect(readable: Readable, writable: Writable): BaseContextClient {
  const connection = createStreamConnection(readable, writable);
  connection.listen();
  return new BaseContextClient(connection);
}

export interface SpawnOptions {
  /** Command and arguments that start the daemon; defaults to `base-context serve` from PATH. */
  command?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where the daemon's stderr (its log) goes; default: inherited. */
  stderr?: "inherit" | "pipe" | "ignore";
}

export interface SpawnedDaemon {
  client: BaseContextClient;
  process: ChildProcess;
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>;
}

export function spawnDaemon(options: SpawnOptions = {}): SpawnedDaemon {
  const child = spawn(options.command ?? "base-context", options.args ?? ["serve"], {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: ["pipe", "pipe", options.stderr ?? "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  if (!child.stdout || !child.stdin) throw new Error("daemon stdio is not piped");
  const client = connect(child.stdout, child.stdin);
  return { client, process: child, exited };
}
