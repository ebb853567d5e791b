import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compactHooks, treeHooks } from "./adapters.js";
import { compactEvent, pluginModule, settings, startedHost, treeEvent, writePlugin, type Disposers } from "./test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const disposers: Disposers = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

async function host(plugins: Record<string, string>) {
  const home = dirs.make();
  disposers.push(() => dirs.remove(home));
  for (const [name, hooks] of Object.entries(plugins)) writePlugin(join(home, "plugins"), name, { "index.js": pluginModule(hooks) });
  return startedHost(home, disposers);
}

describe("the hook adapters for the compaction and tree services", () => {
  it("maps a compaction result and a tree cancel to the services' outcomes, with the plugin id", async () => {
    const pluginHost = await host({
      summarizer: `session_before_compact() { return { compaction: { summary: "s", firstKeptEntryId: "u2", tokensBefore: 5 } }; }`,
      guard: `session_before_tree() { return { cancel: true }; }`,
    });
    const project = dirs.make();
    disposers.push(() => dirs.remove(project));
    const context = { sessionId: "s1", projectDir: project, settings: settings() };
    const signal = new AbortController().signal;
    expect(await compactHooks(pluginHost).runCompactHook(compactEvent(), signal, context)).toEqual({
      pluginId: "global:summarizer",
      compaction: { summary: "s", firstKeptEntryId: "u2", tokensBefore: 5 },
    });
    expect(await treeHooks(pluginHost).runTreeHook(treeEvent(), signal, context)).toEqual({ cancel: true, pluginId: "global:guard" });
  });

  it("says cheaply whether any plugin could answer session_before_compact", async () => {
    const onlyTree = await host({ guard: `session_before_tree() { return { cancel: true }; }` });
    const hooks = compactHooks(onlyTree);
    const project = dirs.make();
    disposers.push(() => dirs.remove(project));
    // A project not opened yet might hold plugins: true until its first run opens it.
    expect(hooks.hasCompactHook!({ sessionId: "s", projectDir: project, settings: settings() })).toBe(true);
    expect(
      await hooks.runCompactHook(compactEvent(), new AbortController().signal, {
        sessionId: "s",
        projectDir: project,
        settings: settings(),
      }),
    ).toBeUndefined();
    expect(hooks.hasCompactHook!({ sessionId: "s", projectDir: project, settings: settings() })).toBe(false);
    expect(onlyTree.hasHook("session_before_tree", { settings: settings() })).toBe(true);
    expect(onlyTree.hasHook("session_before_tree", { settings: settings({ enabled: false }) })).toBe(false);
  });
});
