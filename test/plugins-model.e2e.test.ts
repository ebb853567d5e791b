/**
 * What the daemon lends its plugins (docs/design.md#what-plugins-may-borrow): `ctx.complete` runs on the daemon's own
 * model (here the local OpenAI-compatible fake) with a key that never enters the plugin's worker,
 * `ctx.countTokens` is the daemon's tokenizer, and `ctx.signal` aborts when the client cancels.
 */
import { ErrorCodes, ModelComplete, SessionGet } from "@base-context/protocol";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { rpcError } from "./fixtures/e2e.js";
import { reply, useFakeOpenAI } from "./support/fake-openai.js";
import { compact, compactableSession, hookPlugin, usePluginDaemons } from "./support/plugins.js";
import { waitFor } from "./support/wait.js";

const MODEL = "fake-summarizer";
const daemons = usePluginDaemons();
const { dirs } = daemons;
const fake = useFakeOpenAI();
beforeEach(() => {
  fake.requests.length = 0;
});

/** The daemon's model is the fake, its key in a variable of its own choosing (summarizer.apiKeyEnv). */
async function daemonWithModel(compactHook: string, preamble = "") {
  const summarizer = {
    provider: "openai",
    baseURL: fake.baseURL,
    model: MODEL,
    apiKeyEnv: "BC_SUMMARIZER_KEY",
    maxRetries: 0,
    timeoutMs: 60_000,
  };
  return daemons.start({
    plugins: { borrower: hookPlugin({ compact: compactHook, preamble }) },
    settings: { summarizer },
    env: { BC_SUMMARIZER_KEY: "the-daemons-secret", OPENAI_API_KEY: "another-secret" },
  });
}

describe("ctx.complete and ctx.countTokens", () => {
  it("call the daemon's model with its key, which the plugin never sees, and its tokenizer", async () => {
    fake.setHandler((request) => reply.text(request.body?.max_tokens === 123 ? "the model's summary" : "the model's answer"));
    const { client, project } = await daemonWithModel(`
const p = event.preparation;
const first = await ctx.complete({ system: "Summarize briefly.", prompt: "Messages: " + p.messagesToSummarize.length, maxTokens: 123 });
const chat = await ctx.complete({ messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }, { role: "user", content: "again" }], maxTokens: 10 });
const tokens = await ctx.countTokens("hello world");
const keys = ["BC_SUMMARIZER_KEY", "OPENAI_API_KEY"].filter((name) => name in process.env);
const leaked = Object.values(process.env).filter((value) => value === "the-daemons-secret" || value === "another-secret").length;
return { compaction: { summary: first.text, firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore,
  details: { model: first.model, usage: first.usage, chat: chat.text, tokens, keys, leaked } } };`);
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result.compaction).toMatchObject({
      summary: "the model's summary",
      fromHook: true,
      details: { model: MODEL, chat: "the model's answer", tokens: 2, keys: [], leaked: 0 },
    });
    expect((result.compaction!.details as { usage?: { input?: number; output?: number } }).usage).toEqual({
      input: expect.any(Number),
      output: expect.any(Number),
    });
    const [first, second] = fake.chatRequests();
    expect(first?.headers.authorization).toBe("Bearer the-daemons-secret");
    expect(first?.body).toMatchObject({
      model: MODEL,
      max_tokens: 123,
      messages: [
        { role: "system", content: "Summarize briefly." },
        { role: "user", content: "Messages: 4" },
      ],
    });
    expect(second?.body?.messages).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "again" },
    ]);
  });

  it("ctx.complete reaches the model of the client whose request ran the hook, when it offers one", async () => {
    const asked: { purpose: string; sessionId?: string | undefined; system?: string | undefined; messages: unknown }[] = [];
    const setup = await daemons.start({
      plugins: {
        borrower: hookPlugin({
          compact: `const answer = await ctx.complete({ system: "Be brief.", prompt: "Name the goal.", maxTokens: 50 });
const p = event.preparation;
return { compaction: { summary: answer.text, firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore, details: { model: answer.model } } };`,
        }),
      },
      // A key but no model named: only the client's model may answer.
      env: { OPENAI_API_KEY: "sk-user", OPENAI_BASE_URL: fake.baseURL },
      beforeInitialize: (client) =>
        client.onRequest(ModelComplete, (params) => {
          asked.push(params);
          return { text: "the client's answer", model: "client-llm" };
        }),
    });
    const { sessionId } = await compactableSession(setup.client, setup.project);

    const result = await compact(setup.client, sessionId);

    expect(result.compaction).toMatchObject({ summary: "the client's answer", details: { model: "client-llm" } });
    expect(asked).toEqual([
      { purpose: "plugin", system: "Be brief.", messages: [{ role: "user", content: "Name the goal." }], maxTokens: 50, sessionId },
    ]);
    expect(fake.requests).toEqual([]);
  });

  it("refuses ctx.complete when the project's settings narrow summarizer.provider to extractive", async () => {
    fake.setHandler(() => reply.text("the model's answer"));
    const { client, project } = await daemonWithModel(`let message = "resolved";
try { await ctx.complete({ prompt: "x", maxTokens: 10 }); } catch (error) { message = error.message; }
const p = event.preparation;
return { compaction: { summary: message, firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore } };`);
    mkdirSync(join(project, ".base-context"), { recursive: true });
    writeFileSync(join(project, ".base-context", "settings.json"), JSON.stringify({ summarizer: { provider: "extractive" } }));
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result.compaction?.summary).toBe(
      'ctx.complete: the daemon has no model to offer (the project\'s settings narrow summarizer.provider to "extractive")',
    );
    expect(fake.requests).toEqual([]);
  });

  it("rejects ctx.complete with a clear message when the daemon has no model", async () => {
    const setup = await daemons.start({
      plugins: {
        borrower: hookPlugin({
          compact: `let message = "resolved";
try { await ctx.complete({ prompt: "x", maxTokens: 10 }); } catch (error) { message = error.message; }
const p = event.preparation;
return { compaction: { summary: message, firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore } };`,
        }),
      },
    });
    const { sessionId } = await compactableSession(setup.client, setup.project);

    const result = await compact(setup.client, sessionId);

    expect(result.compaction?.summary).toContain("ctx.complete: the daemon has no model to offer");
    expect(result.compaction?.summary).toContain("the client did not offer its model, and the global settings name no summarizer.model");
  });
});

describe("ctx.signal", () => {
  it("aborts when the client cancels the compaction: the model call is dropped and nothing is written", async () => {
    fake.setHandler(() => reply.hang());
    const marker = join(dirs.make("bc-plugins-marker-"), "aborted.json");
    const { client, project } = await daemonWithModel(
      `try {
  await ctx.complete({ prompt: "take your time", maxTokens: 10 });
} catch (error) {
  writeFileSync(${JSON.stringify(marker)}, JSON.stringify({ aborted: ctx.signal.aborted, reason: ctx.signal.reason?.name ?? null, error: error.message }));
  throw error;
}`,
      'import { writeFileSync } from "node:fs";',
    );
    const { sessionId } = await compactableSession(client, project);

    const controller = new AbortController();
    const cancelled = rpcError(compact(client, sessionId, { signal: controller.signal }));
    await waitFor(() => fake.chatRequests().length > 0, { timeoutMs: 20_000, message: "the plugin's model call" });
    controller.abort();

    expect((await cancelled).code).toBe(ErrorCodes.RequestCancelled);
    await waitFor(() => existsSync(marker), { timeoutMs: 10_000, message: "the plugin to see the abort" });
    expect(JSON.parse(readFileSync(marker, "utf8"))).toMatchObject({ aborted: true, reason: "AbortError" });
    await waitFor(() => fake.chatRequests()[0]?.disconnected === true, { message: "the daemon to drop the model call" });
    expect((await client.request(SessionGet, { sessionId })).entryCount).toBe(5);
  });
});
