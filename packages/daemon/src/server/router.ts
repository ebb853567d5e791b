/**
 * A table of request handlers keyed by method. `handle(decl, impl)` is the one wrapper every
 * method goes through: params validated with the declaration's schema (zod issues → -32602),
 * the cancellation token turned into an AbortSignal, errors mapped in one place.
 */
import { ErrorCodes, quoteInput, type NotificationDecl, type RequestDecl } from "@base-context/protocol";
import { ResponseError, type CancellationToken } from "vscode-jsonrpc";
import type { z } from "zod";
import { CancelledError } from "../errors.js";
import { MAX_PARAMS_DEPTH, tooDeepAt } from "@base-context/core";
import type { ClientModel } from "../summarizer/index.js";
import { invalidParams, toResponseError } from "./rpc-errors.js";

export interface RequestContext {
  method: string;
  /** The project the requesting client named in `initialize` (each client its own, over a socket). */
  projectDir: string | undefined;
  /**
   * The requesting client's model, when it offered one at `initialize` (`model/complete`): work
   * this request starts (a compaction, a branch summary, a plugin's `ctx.complete`) may ask it.
   */
  clientModel: ClientModel | undefined;
  /** Aborted when the client sends `$/cancelRequest` for this request. */
  signal: AbortSignal;
  /** Reports `$/progress` when the client gave a `workDoneToken`; a no-op otherwise. */
  progress(token: string | number | undefined, value: unknown): void;
  notify<P extends z.ZodType>(decl: NotificationDecl<string, P>, params: z.input<P>): void;
}

export type Impl<P extends z.ZodType, R extends z.ZodType> = (
  params: z.output<P>,
  ctx: RequestContext,
) => z.input<R> | Promise<z.input<R>>;

interface Entry {
  decl: RequestDecl<string, z.ZodType, z.ZodType>;
  impl: Impl<z.ZodType, z.ZodType>;
  /** `initialize`, `shutdown`: not counted as requests served (RequestActivity.served). */
  lifecycle: boolean;
  /** Cancelled by `finishRequests` (shutdown): see HandleOptions. */
  cancelOnShutdown: boolean;
}

export interface HandleOptions {
  /** The server's own `initialize`/`shutdown`, not a request the daemon serves. */
  lifecycle?: boolean;
  /**
   * Work that waits on a model (a compaction, a summary): `shutdown` cancels it, as a
   * `$/cancelRequest` would, instead of waiting for an answer that may take minutes or never
   * come. Storage work (appends, imports) is finished instead, so that what a client sent before
   * `shutdown` is stored.
   */
  cancelOnShutdown?: boolean;
}

export interface Peer {
  sendNotification(method: string, params: unknown): void;
  sendProgress(token: string | number, value: unknown): void;
}

/**
 * Whether a server is serving requests, across every router it has (a socket server has one per
 * connection, all sharing its RequestActivity): background work (token backfill, warming the
 * tokenizer) runs in the gaps, not in the way. Each server has its own, so two servers in one
 * process (tests, an embedder) do not hold up each other's background work.
 */
export class RequestActivity {
  private inFlight = 0;
  private lastSeen = performance.now();
  private servedCount = 0;
  private servedWaiters: (() => void)[] = [];

  begin(): void {
    this.inFlight++;
    this.lastSeen = performance.now();
  }

  /** `served`: it was a request of the daemon's own, not of the lifecycle (`initialize`, `shutdown`). */
  end(served = true): void {
    this.inFlight--;
    this.lastSeen = performance.now();
    if (!served) return;
    this.servedCount++;
    for (const resolve of this.servedWaiters.splice(0)) resolve();
  }

  /** How many requests other than the lifecycle's have been answered (or failed). */
  get served(): number {
    return this.servedCount;
  }

  /** Resolves once a request other than the lifecycle's has been answered (or failed). */
  whenServed(): Promise<void> {
    if (this.servedCount > 0) return Promise.resolve();
    return new Promise((resolve) => this.servedWaiters.push(resolve));
  }

  /** No request in flight, and none seen for `quietMs`. */
  isIdle(quietMs: number): boolean {
    return this.inFlight === 0 && performance.now() - this.lastSeen >= quietMs;
  }

  /**
   * Resolves once the daemon has been idle for `quietMs`. Its timers never keep the process
   * alive: work waiting here is dropped when the daemon exits.
   */
  whenIdle(quietMs: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.isIdle(quietMs)) return resolve();
        const wait = this.inFlight > 0 ? quietMs : quietMs - (performance.now() - this.lastSeen);
        setTimeout(check, Math.max(1, Math.ceil(wait))).unref();
      };
      check();
    });
  }
}

export class Router {
  private readonly table = new Map<string, Entry>();
  /** Set by the server when its client's `initialize` names a project; every request of the client sees it. */
  projectDir: string | undefined;
  /** Set by the server when its client offers its model at `initialize`; every request of the client sees it. */
  clientModel: ClientModel | undefined;

  /** `activity`: shared with the server's other routers, if it has any; else this router's own. */
  constructor(readonly activity: RequestActivity = new RequestActivity()) {}
  /** Set by `deferUntil`: the handlers not registered yet are on their way. */
  private registering: Promise<void> | undefined;

  /**
   * Requests wait for `registered` before they are looked up: `serve` answers `initialize` first
   * and registers the daemon's handlers right after. When `registered` fails, so does each request
   * for a method that had no handler yet, with its error.
   */
  deferUntil(registered: Promise<void>): void {
    this.registering = registered;
    registered.then(
      () => {
        if (this.registering === registered) this.registering = undefined;
      },
      () => undefined,
    );
  }

  handle<P extends z.ZodType, R extends z.ZodType>(decl: RequestDecl<string, P, R>, impl: Impl<P, R>, options: HandleOptions = {}): void {
    if (this.table.has(decl.method)) throw new Error(`${decl.method} is handled twice`);
    this.table.set(decl.method, {
      decl,
      impl: impl as Impl<z.ZodType, z.ZodType>,
      lifecycle: options.lifecycle === true,
      cancelOnShutdown: options.cancelOnShutdown === true,
    });
  }

  async dispatch(method: string, rawParams: unknown, token: CancellationToken, peer: Peer): Promise<unknown> {
    if (this.registering !== undefined) {
      // Every request waits, the lifecycle's too: a `shutdown` sent after requests that are waiting
      // is answered after them, in the order sent. Failed, the registration fails only the methods
      // it was to provide (`shutdown` still ends the daemon in order).
      try {
        await this.registering;
      } catch (error) {
        if (!this.table.has(method)) throw toResponseError(method, error);
      }
    }
    const entry = this.table.get(method);
    if (!entry) throw new ResponseError(ErrorCodes.MethodNotFound, `unknown method ${quoteInput(method)}`, { code: "method_not_found" });
    const deep = tooDeepAt(rawParams);
    if (deep !== undefined) {
      throw new ResponseError(
        ErrorCodes.InvalidParams,
        `invalid params for ${method}: nested more than ${MAX_PARAMS_DEPTH} levels deep at "${deep.slice(0, 200)}"`,
        { code: "nesting_too_deep", maxDepth: MAX_PARAMS_DEPTH },
      );
    }
    const parsed = entry.decl.params.safeParse(rawParams === undefined ? {} : rawParams);
    if (!parsed.success) throw invalidParams(method, parsed.error);

    const cancellation = new Cancellation(token);
    const ctx: RequestContext = {
      method,
      projectDir: this.projectDir,
      clientModel: this.clientModel,
      // Made on first use: most handlers never look at it, and an AbortController is not free.
      get signal() {
        return cancellation.signal();
      },
      progress: (workDoneToken, value) => {
        if (workDoneToken !== undefined) peer.sendProgress(workDoneToken, value);
      },
      notify: (decl, params) => peer.sendNotification(decl.method, params),
    };
    this.activity.begin();
    // Called at once (an async function's body runs until it awaits): a synchronous handler's work
    // is done in arrival order, as before; a throw becomes the promise's rejection.
    const running = (async () => entry.impl(parsed.data, ctx))();
    if (!entry.lifecycle) this.running.set(running, entry.cancelOnShutdown ? cancellation : undefined);
    try {
      // Work that finished despite a late cancel is reported as done: if it wrote something, the
      // client must learn it did (a cancelled reply would claim nothing was written).
      const result = await running;
      return result ?? null;
    } catch (error) {
      throw toResponseError(method, error);
    } finally {
      this.running.delete(running);
      this.activity.end(!entry.lifecycle);
      cancellation.dispose();
    }
  }

  /**
   * This router's requests in flight (not the lifecycle's), with the cancellation of those
   * `finishRequests` cancels.
   */
  private readonly running = new Map<Promise<unknown>, Cancellation | undefined>();

  /**
   * Cancels the requests in flight registered `cancelOnShutdown`, then settles once every request
   * of this router in flight at the call (not the lifecycle's) has been answered: `shutdown` is
   * answered after the work sent before it, so the client's `exit` that follows never ends the
   * daemon under a request still running.
   */
  async finishRequests(): Promise<void> {
    for (const cancellation of this.running.values()) cancellation?.cancel();
    await Promise.allSettled([...this.running.keys()]);
  }
}

/**
 * The request's AbortSignal, aborted when the client sends `$/cancelRequest` or the server
 * cancels the request (`cancel`, at shutdown); created on demand.
 */
class Cancellation {
  private controller: AbortController | undefined;
  private subscription: { dispose(): void } | undefined;
  private disposed = false;
  private cancelled = false;

  constructor(private readonly token: CancellationToken) {}

  signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      if (!this.disposed) this.subscription = this.token.onCancellationRequested(() => controller.abort(new CancelledError()));
      if (this.cancelled || this.token.isCancellationRequested) controller.abort(new CancelledError());
    }
    return this.controller.signal;
  }

  cancel(): void {
    this.cancelled = true;
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(new CancelledError());
  }

  dispose(): void {
    this.disposed = true;
    this.subscription?.dispose();
  }
}
