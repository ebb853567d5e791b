/**
 * Every message the protocol declares is served or sent by the daemon. A request declared without
 * a handler would otherwise be found only at run time, as -32601 "unknown method".
 *
 * - Requests to the daemon: the router's table, filled as `serve` fills it (the server's own
 *   `initialize`/`shutdown`, then registerHandlers), holds exactly the declared ones.
 * - Notifications to the daemon: the server listens for each (`onNotification(X.method, …)`).
 * - Messages to the client: some daemon source sends each (`sendNotification`, `sendRequest`,
 *   `notify`, `sendToOthers` naming the declaration).
 */
import { protocolMessages, type RegisteredMessage } from "@base-context/protocol";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Daemon } from "../daemon.js";
import { registerHandlers } from "./handlers/index.js";
import { Router } from "./router.js";
import { startServer } from "./server.js";

const sourceRoot = fileURLToPath(new URL("..", import.meta.url));

/** The daemon's shipped sources (tests and test support left out), as one text per file. */
function shippedSources(): string[] {
  const files = readdirSync(sourceRoot, { recursive: true, encoding: "utf8" }).filter(
    (file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !/(^|[\\/])test-support\.ts$/.test(file) && !file.includes("fixtures"),
  );
  return files.map((file) => readFileSync(join(sourceRoot, file), "utf8"));
}

const messages = protocolMessages();
const names = (filter: (m: RegisteredMessage) => boolean) => messages.filter(filter).map((m) => m.name);

/** Whether one of `texts` calls one of `calls` with `name` (the declaration or its `.method`) among its arguments. */
function called(texts: string[], calls: string[], name: string): boolean {
  const pattern = new RegExp(`\\b(?:${calls.join("|")})\\??\\.?\\([^;]*?\\b${name}\\b`);
  return texts.some((text) => pattern.test(text));
}

/** Anything at all: every property and every call gives itself back (a daemon that is never used). */
const anything: unknown = new Proxy(() => undefined, {
  get: (_target, key) => (key === "then" ? undefined : anything),
  apply: () => anything,
});

describe("the protocol's coverage by the daemon", () => {
  it("has a handler for every request sent to the daemon, and none for an undeclared method", () => {
    const handled: string[] = [];
    const router = new Router();
    const handle = router.handle.bind(router);
    router.handle = ((decl, impl, options) => {
      handled.push(decl.method);
      handle(decl, impl, options);
    }) as Router["handle"];
    const input = new PassThrough();
    const running = startServer({
      input,
      output: new PassThrough(),
      router,
      serverInfo: { name: "test", version: "0" },
      capabilities: {},
      onExit: () => undefined,
    });
    registerHandlers(router, anything as Daemon, running.peer).dispose();
    input.end();
    running.connection.dispose();

    const declared = messages.filter((m) => m.decl.kind === "request" && m.direction === "toDaemon").map((m) => m.decl.method);
    expect(handled.sort()).toEqual(declared.sort());
  });

  it("listens for every notification sent to the daemon", () => {
    const texts = shippedSources();
    const missing = names((m) => m.decl.kind === "notification" && m.direction === "toDaemon").filter((name) => !called(texts, ["onNotification"], name));
    expect(missing).toEqual([]);
  });

  it("sends every request and notification declared as going to the client", () => {
    const texts = shippedSources();
    const sends = ["sendNotification", "sendRequest", "sendToOthers", "notify"];
    const toClient = names((m) => m.direction === "toClient");
    expect(toClient.length).toBeGreaterThan(0);
    expect(toClient.filter((name) => !called(texts, sends, name))).toEqual([]);
  });

  it("does not count a mere mention (an import, a comment, a schema read) as sending", () => {
    const texts = ["import { ModelComplete } from 'x';", "// sendRequest sends ModelComplete", "ModelComplete.result.safeParse(raw);"];
    expect(called(texts, ["sendRequest"], "ModelComplete")).toBe(false);
    expect(called(["connection.sendRequest(ModelComplete.method, params);"], ["sendRequest"], "ModelComplete")).toBe(true);
    expect(called(["this.ctx.notify?.(CompactionDidEnd, {"], ["notify"], "CompactionDidEnd")).toBe(true);
  });
});
