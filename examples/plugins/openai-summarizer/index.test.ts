import { runHook, sessionFixture } from "@base-context/plugin-sdk";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import plugin from "./index.js";

/** A local stand-in for an OpenAI-compatible server (loopback only). */
let server: Server;
let requests: { path: string; authorization: string | undefined; body: Record<string, unknown> }[] = [];
let reply: { status: number; text: string } = { status: 200, text: "model summary" };

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      requests.push({ path: req.url ?? "", authorization: req.headers.authorization, body: JSON.parse(body) });
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(
        reply.status === 200
          ? JSON.stringify({
              id: "x",
              object: "chat.completion",
              created: 0,
              model: "m",
              choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: reply.text } }],
            })
          : JSON.stringify({ error: { message: "bad request", type: "invalid_request_error" } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  requests = [];
  reply = { status: 200, text: "model summary" };
  delete process.env.ALT_SUMMARIZER_MODEL;
  delete process.env.ALT_SUMMARIZER_BASE_URL;
  delete process.env.ALT_SUMMARIZER_API_KEY;
});

function configure(): void {
  process.env.ALT_SUMMARIZER_MODEL = "small-summarizer";
  process.env.ALT_SUMMARIZER_BASE_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  process.env.ALT_SUMMARIZER_API_KEY = "sk-plugin-own-key";
}

function session() {
  return sessionFixture()
    .user("Refactor the auth module", { id: "u1" })
    .assistant("Editing", { id: "a1", toolCalls: [{ name: "edit", arguments: { path: "src/auth.ts", oldText: "a", newText: "b" } }] })
    .toolResult("ok", { id: "t1" })
    .user("Thanks, now the docs", { id: "u2" })
    .assistant("Sure", { id: "a2" });
}

describe("openai-summarizer", () => {
  it("stays out of the way when no model is configured", async () => {
    expect((await runHook(plugin, "session_before_compact", session().compactEvent())).kind).toBe("none");
    expect(requests).toEqual([]);
  });

  it("summarizes with its own model and key, using the daemon's prompt and file lists", async () => {
    configure();
    const result = await runHook(plugin, "session_before_compact", session().compactEvent({ customInstructions: "mention the tests" }));
    expect(result.kind === "result" && result.value).toEqual({
      summary: "model summary\n\n<modified-files>\nsrc/auth.ts\n</modified-files>",
      firstKeptEntryId: "u2",
      tokensBefore: expect.any(Number),
      details: { readFiles: [], modifiedFiles: ["src/auth.ts"], summarizer: "openai-summarizer", model: "small-summarizer" },
    });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request!.path).toBe("/v1/chat/completions");
    expect(request!.authorization).toBe("Bearer sk-plugin-own-key");
    expect(request!.body).toMatchObject({ model: "small-summarizer", max_tokens: Math.floor(0.8 * 16384) });
    const [system, user] = request!.body["messages"] as { role: string; content: string }[];
    expect(system!.role).toBe("system");
    expect(user!.content).toContain("<conversation>\n[User]: Refactor the auth module");
    expect(user!.content).toContain("Additional focus: mention the tests");
  });

  it("summarizes a branch being left", async () => {
    configure();
    reply.text = "branch summary";
    const result = await runHook(plugin, "session_before_tree", session().treeEvent("u1"));
    expect(result.kind === "result" && result.value).toEqual({
      summary: "branch summary",
      details: { summarizer: "openai-summarizer", model: "small-summarizer" },
    });
    expect(JSON.stringify(requests[0]!.body)).not.toContain("[Tool result]");
  });

  it("throws when the model fails, so the daemon reports it and uses its own summarizer", async () => {
    configure();
    reply.status = 400;
    await expect(runHook(plugin, "session_before_compact", session().compactEvent())).rejects.toThrow(/400/);
  });
});
