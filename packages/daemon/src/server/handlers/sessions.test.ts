import { describe, expect, it } from "vitest";
import { SESSION_METHODS, type SessionsApi } from "../../sessions/api.js";
import { Router, type RequestContext } from "../router.js";
import { registerSessionHandlers } from "./sessions.js";

describe("registerSessionHandlers", () => {
  it("routes each declaration of SESSION_METHODS to its own SessionsApi method, and no other", async () => {
    const registered = new Map<string, (params: unknown) => unknown>();
    const router = new Router();
    router.handle = ((decl: { method: string }, impl: (params: unknown, ctx: RequestContext) => unknown) => {
      registered.set(decl.method, (params) => impl(params, {} as RequestContext));
    }) as Router["handle"];
    // Every method answers with its own name.
    const sessions = new Proxy({}, { get: (_target, name) => () => ({ called: name }) }) as SessionsApi;
    registerSessionHandlers(router, sessions);

    const expected = Object.entries(SESSION_METHODS).map(([name, decl]) => [decl.method, name] as const);
    expect([...registered.keys()].sort()).toEqual(expected.map(([method]) => method).sort());
    for (const [method, name] of expected) expect(await registered.get(method)!({}), method).toEqual({ called: name });
  });
});
