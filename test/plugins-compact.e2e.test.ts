/**
 * `session_before_compact` through the real daemon over stdio (docs/design.md#plugins): plugins in the
 * temporary home's plugins folder replace or cancel compactions, run in order, and a plugin that
 * throws, answers nonsense or scribbles on stdout never stops the daemon's default path.
 * The daemon's model is the local fake server, so "no model call" can be checked.
 */
import { EntryAppend, ErrorCodes, PluginsList, SessionGet, type BaseContextClient } from "@base-context/protocol";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, rpcError, user } from "./fixtures/e2e.js";
import { useFakeOpenAI } from "./support/fake-openai.js";
import { compact, compactableSession, hookPlugin, replaceSummary, usePluginDaemons } from "./support/plugins.js";
import { waitFor } from "./support/wait.js";

const MODEL = "fake-summarizer";
const daemons = usePluginDaemons();
const { dirs } = daemons;
const fake = useFakeOpenAI();

/** A fresh daemon whose home holds these plugins; its model is the fake server. */
async function daemonWith(plugins: Record<string, Record<string, string>>, settings: Record<string, unknown> = {}) {
  const summarizer = { provider: "openai", baseURL: fake.baseURL, model: MODEL, maxRetries: 0 };
  const before = fake.chatRequests().length;
  const setup = await daemons.start({ plugins, settings: { summarizer, ...settings }, env: { OPENAI_API_KEY: "test-key" } });
  /** Chat requests the fake model got during this test. */
  const modelCalls = () => fake.chatRequests().length - before;
  return { ...setup, modelCalls };
}

const entryCount = async (client: BaseContextClient, sessionId: string) => (await client.request(SessionGet, { sessionId })).entryCount;

describe("a plugin deciding the compaction", () => {
  it("replaces the summary: the entry is fromHook with the plugin's details, and no model is called", async () => {
    const { client, project, modelCalls } = await daemonWith({
      mine: hookPlugin({ compact: replaceSummary("## Goal\nby the plugin", { by: "mine", n: 1 }) }),
    });
    const { sessionId, entries } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result).toMatchObject({ status: "committed", summarizer: "plugin:global:mine" });
    expect(result.compaction).toMatchObject({
      type: "compaction",
      summary: "## Goal\nby the plugin",
      fromHook: true,
      details: { by: "mine", n: 1 },
      firstKeptEntryId: entries[4]!.id,
    });
    expect(modelCalls()).toBe(0);
  });

  it("cancels with { cancel: true }: status cancelled, nothing written", async () => {
    const { client, project, modelCalls } = await daemonWith({ stopper: hookPlugin({ compact: "return { cancel: true };" }) });
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result.status).toBe("cancelled");
    expect(result.message).toContain("global:stopper");
    expect(await entryCount(client, sessionId)).toBe(5);
    expect(modelCalls()).toBe(0);
  });

  it("runs several plugins in order: the first cancel wins and later plugins do not run", async () => {
    const marker = join(dirs.make("bc-plugins-marker-"), "ran");
    const { client, project } = await daemonWith(
      {
        summarizer: hookPlugin({ compact: replaceSummary("from summarizer") }),
        guard: hookPlugin({ compact: "return { cancel: true };" }),
        witness: hookPlugin({
          preamble: 'import { writeFileSync } from "node:fs";',
          compact: `writeFileSync(${JSON.stringify(marker)}, "ran"); return undefined;`,
        }),
      },
      { plugins: { order: ["summarizer", "guard", "witness"] } },
    );
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result.status).toBe("cancelled");
    expect(result.message).toContain("global:guard");
    expect(existsSync(marker)).toBe(false);
  });

  it("otherwise the last result wins, and a plugin returning nothing does not erase it", async () => {
    const { client, project } = await daemonWith(
      {
        first: hookPlugin({ compact: replaceSummary("from first") }),
        second: hookPlugin({ compact: replaceSummary("from second", { by: "second" }) }),
        quiet: hookPlugin({ compact: "return undefined;" }),
      },
      { plugins: { order: ["first", "second", "quiet"] } },
    );
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result.summarizer).toBe("plugin:global:second");
    expect(result.compaction).toMatchObject({ summary: "from second", details: { by: "second" }, fromHook: true });
  });

  it("runs no plugin at all with plugins.enabled false", async () => {
    const { client, project, modelCalls } = await daemonWith(
      { stopper: hookPlugin({ compact: "return { cancel: true };" }) },
      { plugins: { enabled: false } },
    );
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result).toMatchObject({ status: "committed", summarizer: `openai:${MODEL}` });
    expect(result.compaction?.fromHook).toBeUndefined();
    expect(modelCalls()).toBe(1);
  });
});

describe("a plugin failing: reported, and the default summary is used", () => {
  it("throws: plugins/didError kind exception, the model summarizes, plugins/list shows the last error", async () => {
    const { client, project, news, modelCalls } = await daemonWith({
      thrower: hookPlugin({ compact: 'throw new Error("the plugin broke");' }),
    });
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result).toMatchObject({ status: "committed", summarizer: `openai:${MODEL}` });
    expect(result.compaction?.fromHook).toBeUndefined();
    expect(modelCalls()).toBe(1);
    const error = await waitFor(() => news.errors[0], { message: "plugins/didError" });
    expect(error).toMatchObject({
      pluginId: "global:thrower",
      hook: "session_before_compact",
      kind: "exception",
      version: "1.0.0",
      generation: 1,
    });
    expect(error.message).toContain("the plugin broke");
    const { plugins } = await client.request(PluginsList, {});
    expect(plugins[0]).toMatchObject({
      id: "global:thrower",
      status: "active",
      lastError: { kind: "exception", hook: "session_before_compact" },
    });
  });

  it("returns an invalid result (a misspelt key): kind invalid-result, ignored", async () => {
    const { client, project, news } = await daemonWith({
      typo: hookPlugin({
        compact:
          'const p = event.preparation; return { compaction: { sumary: "x", firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore } };',
      }),
    });
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result).toMatchObject({ status: "committed", summarizer: `openai:${MODEL}` });
    const error = await waitFor(() => news.errors[0], { message: "plugins/didError" });
    expect(error).toMatchObject({ pluginId: "global:typo", kind: "invalid-result" });
    expect(error.message).toContain("sumary");
  });

  it("names a firstKeptEntryId before the prepared range: rejected, the prepared cut is used", async () => {
    // The first compaction is the daemon's; at the second the plugin tries to keep the session's
    // very first entry, which the first compaction already summarized away.
    const { client, project, news } = await daemonWith({
      greedy: hookPlugin({
        compact: `const p = event.preparation;
if (p.previousSummary === undefined) return undefined;
return { compaction: { summary: "keeps too much", firstKeptEntryId: event.branchEntries[0].id, tokensBefore: p.tokensBefore } };`,
      }),
    });
    const { sessionId, entries } = await compactableSession(client, project);
    expect((await compact(client, sessionId)).status).toBe("committed");
    await client.request(EntryAppend, { sessionId, entry: assistant("The tests pass.") });
    const last = (await client.request(EntryAppend, { sessionId, entry: user("Ship it.") })).entry;

    const result = await compact(client, sessionId);

    expect(result).toMatchObject({ status: "committed", summarizer: `openai:${MODEL}` });
    expect(result.compaction?.firstKeptEntryId).toBe(last.id);
    const error = await waitFor(() => news.errors[0], { message: "plugins/didError" });
    expect(error).toMatchObject({ pluginId: "global:greedy", kind: "invalid-result" });
    expect(error.message).toContain(entries[0]!.id);
  });
});

describe("the plugin host starting", () => {
  it("does not hold up initialize; a compaction arriving before the plugins have loaded waits for them", async () => {
    const gates = dirs.make("bc-plugins-gate-");
    const loading = join(gates, "loading");
    const release = join(gates, "release");
    // Top-level code that cannot finish loading until the test says so.
    const preamble = `import { existsSync, writeFileSync } from "node:fs";
writeFileSync(${JSON.stringify(loading)}, "1");
while (!existsSync(${JSON.stringify(release)})) await new Promise((resolve) => setTimeout(resolve, 20));`;
    const { client, project } = await daemonWith({ slow: hookPlugin({ preamble, compact: replaceSummary("from the slow starter") }) });
    // startDaemon has its initialize reply: the plugin is (at most) still loading.
    const { sessionId } = await compactableSession(client, project);

    let settled = false;
    const compaction = compact(client, sessionId).finally(() => (settled = true));
    await waitFor(() => existsSync(loading), { timeoutMs: 20_000, message: "the plugin to start loading" });
    expect((await client.request(SessionGet, { sessionId })).entryCount).toBe(5);
    expect(settled).toBe(false);
    // A compaction cancelled while it waits for the plugins ends at once, writing nothing.
    const other = await compactableSession(client, project);
    const controller = new AbortController();
    const cancelled = rpcError(compact(client, other.sessionId, { signal: controller.signal }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    expect((await cancelled).code).toBe(ErrorCodes.RequestCancelled);
    expect(settled).toBe(false);
    expect((await client.request(SessionGet, { sessionId: other.sessionId })).entryCount).toBe(5);

    writeFileSync(release, "go");
    const result = await compaction;
    expect(result).toMatchObject({ status: "committed", summarizer: "plugin:global:slow" });
    expect(result.compaction?.summary).toBe("from the slow starter");
  });
});

describe("a plugin writing to stdout", () => {
  it("never reaches the protocol stream: its output lands in the daemon's log and the client keeps working", async () => {
    // What a confused plugin might print: text, and something that looks like a protocol frame.
    const frame = JSON.stringify('Content-Length: 40\r\n\r\n{"jsonrpc":"2.0","method":"bogus"}\n');
    const { client, project, d } = await daemonWith({
      noisy: hookPlugin({
        preamble: `console.log("noisy: loading"); process.stdout.write(${frame});`,
        compact: `console.log("noisy: compacting"); process.stdout.write(${frame}); console.error("noisy: on stderr");
${replaceSummary("summary despite the noise")}`,
      }),
    });
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result.compaction?.summary).toBe("summary despite the noise");
    expect(await entryCount(client, sessionId)).toBe(6);
    await waitFor(() => d.stderr().includes("noisy: compacting") && d.stderr().includes("noisy: on stderr"), {
      message: "the plugin's output in the daemon's log",
    });
    expect(d.stderr()).toContain("[plugin noisy] noisy: loading");
  });
});
