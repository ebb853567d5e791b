/**
 * What a handler's failure looks like on the wire: every error is a ResponseError with the
 * documented JSON-RPC code and a `data.code` string (docs/protocol.md "Errors").
 */
import { ErrorCodes, request } from "@base-context/protocol";
import { CancellationTokenSource, ResponseError } from "vscode-jsonrpc";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError, CancelledError, RequestFailedError, StoreUnavailableError } from "../errors.js";
import { ConnectionHub } from "./connection-hub.js";
import { RequestActivity, Router, type Peer } from "./router.js";

const Echo = request("test/echo", z.object({ n: z.number().int() }), z.object({ n: z.number() }));
const Fail = request("test/fail", z.object({}), z.null());
const Wait = request("test/wait", z.object({}), z.null());

const peer: Peer = { sendNotification: () => undefined, sendProgress: () => undefined };

function routerFailingWith(error: unknown): Router {
  const router = new Router();
  router.handle(Echo, (params) => ({ n: params.n }));
  router.handle(Fail, () => {
    throw error;
  });
  return router;
}

async function failure(
  router: Router,
  method: string,
  params: unknown = {},
): Promise<{ code: number; message: string; data: Record<string, unknown> }> {
  try {
    await router.dispatch(method, params, new CancellationTokenSource().token, peer);
  } catch (error) {
    expect(error).toBeInstanceOf(ResponseError);
    const { code, message, data } = error as ResponseError<Record<string, unknown>>;
    return { code, message, data: data! };
  }
  throw new Error(`${method} did not fail`);
}

describe("Router.dispatch errors", () => {
  it("answers an unknown method with -32601 method_not_found", async () => {
    expect(await failure(routerFailingWith(null), "test/nope")).toEqual({
      code: ErrorCodes.MethodNotFound,
      message: 'unknown method "test/nope"',
      data: { code: "method_not_found" },
    });
  });

  it("answers params that do not fit the schema with -32602 and the issues", async () => {
    const { code, message, data } = await failure(routerFailingWith(null), "test/echo", { n: 1.5 });
    expect(code).toBe(ErrorCodes.InvalidParams);
    expect(message).toMatch(/^invalid params for test\/echo at "n": /);
    expect(data).toMatchObject({ code: "invalid_params", issues: [{ path: "n" }] });
  });

  it("keeps an application error's code and data", async () => {
    const error = new AppError("entry_not_found", "no such entry", { sessionId: "s", entryId: "e" });
    expect(await failure(routerFailingWith(error), "test/fail")).toEqual({
      code: ErrorCodes.EntryNotFound,
      message: "no such entry",
      data: { sessionId: "s", entryId: "e", code: "entry_not_found" },
    });
  });

  it("answers a failed dependency with -32803 request_failed", async () => {
    const error = new RequestFailedError("the model said no", { status: 500 });
    expect(await failure(routerFailingWith(error), "test/fail")).toEqual({
      code: ErrorCodes.RequestFailed,
      message: "the model said no",
      data: { status: 500, code: "request_failed" },
    });
  });

  it("answers a lost PostgreSQL store with -32803 request_failed, saying to retry", async () => {
    // Recognised by its class, not its name: an error merely called so is an internal error.
    const impostor = Object.assign(new Error("connection terminated unexpectedly"), { name: "StoreUnavailableError" });
    expect((await failure(routerFailingWith(impostor), "test/fail")).code).toBe(ErrorCodes.InternalError);
    const lost = new StoreUnavailableError("connection terminated unexpectedly");
    expect(await failure(routerFailingWith(lost), "test/fail")).toEqual({
      code: ErrorCodes.RequestFailed,
      message: "test/fail failed: the session store is unavailable (connection terminated unexpectedly); retry",
      data: { code: "request_failed", storeUnavailable: true },
    });
  });

  it("answers an unexpected exception with -32603 internal_error naming the method, not a raw error", async () => {
    expect(await failure(routerFailingWith(new TypeError("x is undefined")), "test/fail")).toEqual({
      code: ErrorCodes.InternalError,
      message: "test/fail failed: x is undefined",
      data: { code: "internal_error" },
    });
    expect(await failure(routerFailingWith("a string"), "test/fail")).toEqual({
      code: ErrorCodes.InternalError,
      message: "test/fail failed: a string",
      data: { code: "internal_error" },
    });
  });

  it("answers $/cancelRequest with -32800 cancelled, through the handler's signal", async () => {
    const router = new Router();
    router.handle(Wait, (_params, ctx) => {
      return new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    });
    const source = new CancellationTokenSource();
    const pending = router.dispatch("test/wait", {}, source.token, peer);
    source.cancel();
    const error = (await pending.catch((caught: unknown) => caught)) as ResponseError<unknown>;
    expect(error).toBeInstanceOf(ResponseError);
    expect({ code: error.code, data: error.data }).toEqual({ code: ErrorCodes.RequestCancelled, data: { code: "cancelled" } });
    expect(new CancelledError().rpcCode).toBe(ErrorCodes.RequestCancelled);
  });

  it("a request cancelled before it was dispatched gets an aborted signal too", async () => {
    // A $/cancelRequest read while its request still waits in vscode-jsonrpc's queue: the request
    // comes with the shared CancellationToken.Cancelled, whose onCancellationRequested never fires.
    const router = new Router();
    router.handle(Wait, (_params, ctx) => {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      return new Promise(() => undefined);
    });
    const source = new CancellationTokenSource();
    source.cancel();
    const error = (await router.dispatch("test/wait", {}, source.token, peer).catch((caught: unknown) => caught)) as ResponseError<unknown>;
    expect({ code: error.code, data: error.data }).toEqual({ code: ErrorCodes.RequestCancelled, data: { code: "cancelled" } });
  });
});

describe("request activity", () => {
  /** A router whose one method waits until released, and a way to release it. */
  function waitingRouter(activity?: RequestActivity): { router: Router; release: () => void } {
    const router = new Router(activity);
    let release = () => {};
    router.handle(Wait, () => new Promise<null>((resolve) => (release = () => resolve(null))));
    return { router, release: () => release() };
  }

  it("is each server's own: a request in flight on one keeps only that one busy", async () => {
    const first = waitingRouter();
    const second = waitingRouter();
    const pending = first.router.dispatch("test/wait", {}, new CancellationTokenSource().token, peer);
    expect(first.router.activity.isIdle(0)).toBe(false);
    expect(second.router.activity.isIdle(0)).toBe(true);
    first.release();
    await pending;
    expect(first.router.activity.isIdle(0)).toBe(true);
  });

  it("is shared by the routers of one socket server's connections", async () => {
    const activity = new RequestActivity();
    const hub = new ConnectionHub({ sessions: { onDidAppend: () => ({ dispose: () => undefined }) }, activity });
    const router = hub.routerFor(hub.add());
    let release = () => {};
    router.handle(Wait, () => new Promise<null>((resolve) => (release = () => resolve(null))));
    expect(hub.routerFor(hub.add()).activity).toBe(activity);
    const pending = router.dispatch("test/wait", {}, new CancellationTokenSource().token, peer);
    expect(activity.isIdle(0)).toBe(false);
    release();
    await pending;
    expect(activity.isIdle(0)).toBe(true);
    hub.dispose();
  });

  // The code cache is rewritten once a daemon has served requests (cli/code-cache.ts): the
  // lifecycle's own requests compile nothing of the daemon's and do not count.
  it("counts the requests served, not the lifecycle's", async () => {
    const router = new Router();
    const Lifecycle = request("test/lifecycle", z.object({}), z.null());
    router.handle(Lifecycle, () => null, { lifecycle: true });
    router.handle(Echo, (params) => ({ n: params.n }));
    router.handle(Fail, () => {
      throw new Error("no");
    });
    let served = false;
    void router.activity.whenServed().then(() => (served = true));
    await router.dispatch("test/lifecycle", {}, new CancellationTokenSource().token, peer);
    await Promise.resolve();
    expect(router.activity.served).toBe(0);
    expect(served).toBe(false);
    await failure(router, "test/fail");
    expect(router.activity.served).toBe(1);
    await router.activity.whenServed();
    expect(served).toBe(true);
    await router.dispatch("test/echo", { n: 1 }, new CancellationTokenSource().token, peer);
    expect(router.activity.served).toBe(2);
  });
});

describe("Router.deferUntil (handlers registered after the initialize reply)", () => {
  it("holds a request for a method not registered yet until the registration is done, then runs it", async () => {
    const router = new Router();
    let register!: () => void;
    router.deferUntil(new Promise<void>((resolve) => (register = resolve)));
    const answer = router.dispatch("test/echo", { n: 3 }, new CancellationTokenSource().token, peer);
    router.handle(Echo, (params) => ({ n: params.n * 2 }));
    register();
    expect(await answer).toEqual({ n: 6 });
    // Once registered, an unknown method is unknown again (it does not wait for anything).
    expect((await failure(router, "test/nope")).code).toBe(ErrorCodes.MethodNotFound);
  });

  it("answers a request for a registered method (shutdown, say) after the waiting ones sent before it", async () => {
    const router = new Router();
    router.handle(Echo, (params) => ({ n: params.n }));
    let register!: () => void;
    router.deferUntil(new Promise<void>((resolve) => (register = resolve)));
    const order: string[] = [];
    const token = new CancellationTokenSource().token;
    const late = router.dispatch("test/wait", {}, token, peer).then(() => order.push("waiting request"));
    const echo = router.dispatch("test/echo", { n: 1 }, token, peer).then(() => order.push("registered method"));
    router.handle(Wait, () => null);
    register();
    await Promise.all([late, echo]);
    expect(order).toEqual(["waiting request", "registered method"]);
  });

  it("fails every such request with the registration's error, while registered methods still run", async () => {
    const router = new Router();
    router.handle(Echo, (params) => ({ n: params.n }));
    const broken = Promise.reject(new RequestFailedError("the daemon cannot use its session database x.db: file is not a database"));
    router.deferUntil(broken);
    for (let i = 0; i < 2; i++) {
      expect(await failure(router, "test/fail")).toMatchObject({ code: ErrorCodes.RequestFailed, data: { code: "request_failed" } });
    }
    expect(await router.dispatch("test/echo", { n: 1 }, new CancellationTokenSource().token, peer)).toEqual({ n: 1 });
  });
});

describe("Router.finishRequests (what shutdown waits for)", () => {
  it("settles once the requests in flight at the call are answered, failed ones included, not the lifecycle's", async () => {
    const router = new Router();
    let release = () => {};
    router.handle(Wait, () => new Promise<null>((resolve) => (release = () => resolve(null))));
    router.handle(Fail, () => {
      throw new Error("no");
    });
    const Lifecycle = request("test/lifecycle", z.object({}), z.null());
    router.handle(Lifecycle, async () => {
      await router.finishRequests();
      return null;
    }, { lifecycle: true });
    const token = new CancellationTokenSource().token;
    const order: string[] = [];
    const waiting = router.dispatch("test/wait", {}, token, peer).then(() => order.push("request"));
    const failed = router.dispatch("test/fail", {}, token, peer).catch(() => order.push("failed request"));
    // A lifecycle request waiting for the others is not waited for by itself.
    const lifecycle = router.dispatch("test/lifecycle", {}, token, peer).then(() => order.push("lifecycle"));
    await failed;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual(["failed request"]);
    release();
    await Promise.all([waiting, lifecycle]);
    expect(order).toEqual(["failed request", "request", "lifecycle"]);
    // Nothing in flight: at once.
    await router.finishRequests();
  });

  it("cancels the requests registered cancelOnShutdown (their signal aborts, before or after they look at it) and waits for the others", async () => {
    const router = new Router();
    const Model = request("test/model", z.object({ lookLate: z.boolean() }), z.null());
    router.handle(Model, async (params, ctx) => {
      if (params.lookLate) await new Promise((resolve) => setTimeout(resolve, 10));
      const { signal } = ctx;
      if (signal.aborted) throw signal.reason;
      return new Promise<null>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    }, { cancelOnShutdown: true });
    let stored = false;
    let release = () => {};
    // Storage work: its signal is never aborted by shutdown.
    router.handle(Wait, (_params, ctx) => new Promise<null>((resolve, reject) => {
      ctx.signal.addEventListener("abort", () => reject(new Error("storage work cancelled")));
      release = () => {
        stored = true;
        resolve(null);
      };
    }));
    const token = new CancellationTokenSource().token;
    const early = router.dispatch("test/model", { lookLate: false }, token, peer);
    const late = router.dispatch("test/model", { lookLate: true }, token, peer);
    const storing = router.dispatch("test/wait", {}, token, peer);
    await new Promise((resolve) => setImmediate(resolve));
    let finished = false;
    const finishing = router.finishRequests().then(() => (finished = true));
    await expect(early).rejects.toMatchObject({ code: ErrorCodes.RequestCancelled });
    await expect(late).rejects.toMatchObject({ code: ErrorCodes.RequestCancelled });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(finished).toBe(false);
    release();
    await finishing;
    await storing;
    expect(stored).toBe(true);
  });
});
