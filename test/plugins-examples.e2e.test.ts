/**
 * The example plugins (examples/plugins/*), installed the way their READMEs say — the folder
 * copied into the plugins folder, nothing installed or built — and exercised through the daemon.
 */
import { EntryAppend, LabelSet, PluginsList, SessionCreate, TreeNavigate, type BaseContextClient } from "@base-context/protocol";
import { readdirSync } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import { appendAll, assistant, toolResult, user } from "./fixtures/e2e.js";
import { reply, useFakeOpenAI } from "./support/fake-openai.js";
import {
  compact,
  compactableSession,
  EXAMPLES_DIR,
  installExample,
  pluginsRoot,
  usePluginDaemons,
  waitForPlugin,
  type PluginDaemonOptions,
} from "./support/plugins.js";

const daemons = usePluginDaemons();
const fake = useFakeOpenAI();
beforeEach(() => {
  fake.requests.length = 0;
});

/** A daemon with these examples copied into its plugins folder; started once they are in place. */
async function daemonWithExamples(names: string[], options: PluginDaemonOptions = {}) {
  const setup = await daemons.start(options);
  for (const name of names) installExample(name, pluginsRoot(setup.home));
  // Copied while the daemon's plugin host is starting (it starts right after initialize): the
  // folders must be found by its first scan or its watcher, whichever comes second.
  for (const name of names) await waitForPlugin(setup.client, name, (info) => info.status === "active", 20_000);
  return setup;
}

async function session(client: BaseContextClient, cwd: string) {
  const { session } = await client.request(SessionCreate, { cwd });
  return session.id;
}

describe("every example", () => {
  it("loads from a plain copy of its folder (no node_modules)", async () => {
    const names = readdirSync(EXAMPLES_DIR).sort();
    const { client } = await daemonWithExamples(names);
    const { plugins } = await client.request(PluginsList, {});
    expect(plugins.map((plugin) => [plugin.name, plugin.status, plugin.lastError])).toEqual(
      names.map((name) => [name, "active", undefined]),
    );
  });
});

describe("pinned-guard", () => {
  it("cancels a compaction that would summarize a pinned entry, and lets it happen once unpinned", async () => {
    const { client, project } = await daemonWithExamples(["pinned-guard"]);
    const { sessionId, entries } = await compactableSession(client, project);
    await client.request(LabelSet, { sessionId, targetId: entries[0]!.id, label: "pinned" });
    await client.request(EntryAppend, { sessionId, entry: user("And lint.") });

    const guarded = await compact(client, sessionId);
    expect(guarded.status).toBe("cancelled");
    expect(guarded.message).toContain("pinned-guard");

    await client.request(LabelSet, { sessionId, targetId: entries[0]!.id, label: null });
    expect((await compact(client, sessionId)).status).toBe("committed");
  });

  it("cancels navigating away from a branch that holds a pinned entry", async () => {
    const { client, project } = await daemonWithExamples(["pinned-guard"]);
    const sessionId = await session(client, project);
    const entries = await appendAll(client, sessionId, [
      user("Plan the migration."),
      assistant("Plan: three steps."),
      user("Keep this exact SQL: ALTER TABLE …"),
      assistant("Noted."),
    ]);
    await client.request(LabelSet, { sessionId, targetId: entries[2]!.id, label: "pinned" });

    const result = await client.request(TreeNavigate, { sessionId, targetId: entries[1]!.id, summarize: true });

    expect(result.status).toBe("cancelled");
  });
});

describe("decisions-artifacts", () => {
  it("writes the daemon model's narrative plus a decisions and artifacts ledger that later compactions extend", async () => {
    fake.setHandler(() => reply.text("Narrative from the daemon's model."));
    const summarizer = { provider: "openai", baseURL: fake.baseURL, model: "fake-summarizer", maxRetries: 0 };
    const { client, project } = await daemonWithExamples(["decisions-artifacts"], {
      settings: { summarizer },
      env: { OPENAI_API_KEY: "test-key" },
    });
    const sessionId = await session(client, project);
    await appendAll(client, sessionId, [
      user("We'll use zod for validation. Read the schema."),
      assistant("Reading it.", { toolCalls: [{ id: "c1", name: "read", arguments: { path: "src/schema.ts" } }] }),
      toolResult("c1", "read", "export const Schema = {};"),
      assistant("Done."),
      user("Next: the handlers."),
    ]);

    const first = await compact(client, sessionId);
    expect(first.summarizer).toBe("plugin:global:decisions-artifacts");
    expect(first.compaction?.summary).toContain("Narrative from the daemon's model.");
    expect(first.compaction?.summary).toContain("## Decisions\n- We'll use zod for validation.");
    expect(first.compaction?.summary).toContain("`src/schema.ts` — read");
    expect(first.compaction?.details).toMatchObject({ kind: "decisions-and-artifacts", compactions: 1 });
    expect(fake.chatRequests()).toHaveLength(1);

    await appendAll(client, sessionId, [
      assistant("Editing.", { toolCalls: [{ id: "c2", name: "edit", arguments: { path: "src/handlers.ts" } }] }),
      toolResult("c2", "edit", "ok"),
      assistant("Handlers done."),
      user("Now the docs."),
    ]);
    const second = await compact(client, sessionId);
    expect(second.compaction?.details).toMatchObject({
      compactions: 2,
      artifacts: { "src/schema.ts": { operations: ["read"] }, "src/handlers.ts": { operations: ["edited"] } },
    });
    expect(second.compaction?.summary).toContain("We'll use zod for validation.");
  });
});

describe("openai-summarizer", () => {
  it("summarizes compactions and branches with its own model, from its own environment variables", async () => {
    fake.setHandler((request) => reply.text(`Summary by ${request.body?.model ?? "?"}.`));
    const { client, project } = await daemonWithExamples(["openai-summarizer"], {
      env: { ALT_SUMMARIZER_MODEL: "alt-model", ALT_SUMMARIZER_BASE_URL: fake.baseURL },
    });
    const { sessionId } = await compactableSession(client, project);

    const compaction = await compact(client, sessionId);
    expect(compaction.summarizer).toBe("plugin:global:openai-summarizer");
    expect(compaction.compaction?.summary).toContain("Summary by alt-model.");
    expect(compaction.compaction?.summary).toContain("<read-files>\nsrc/config.ts\n</read-files>");
    expect(compaction.compaction?.details).toMatchObject({ summarizer: "openai-summarizer", model: "alt-model" });

    const branch = await session(client, project);
    const entries = await appendAll(client, branch, [
      user("Try approach A."),
      assistant("A works."),
      user("Now try B."),
      assistant("B is slower."),
    ]);
    const navigated = await client.request(TreeNavigate, { sessionId: branch, targetId: entries[1]!.id, summarize: true });
    expect(navigated.summaryEntry).toMatchObject({ fromHook: true, summary: "Summary by alt-model.", details: { model: "alt-model" } });
    expect(fake.chatRequests().every((request) => request.body?.model === "alt-model")).toBe(true);
  });
});
