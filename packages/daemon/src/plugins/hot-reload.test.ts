import type { PluginError, PluginInfo } from "@base-context/protocol";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { addLogSink } from "../log.js";
import { PluginHost } from "./host.js";
import { atomicSave, compactEvent, eventually, pluginModule, settings, writePlugin } from "./test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const disposers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

const summaryHook = (summary: string, delayMs = 0) =>
  `async session_before_compact(event, ctx) {
    ctx.log("info", "started ${summary}");
    if (${delayMs} > 0) await new Promise((resolve) => setTimeout(resolve, ${delayMs}));
    return { compaction: { summary: "${summary}", firstKeptEntryId: "u2", tokensBefore: 1 } };
  }`;

async function watchedHost(plugins: Record<string, string>) {
  const home = dirs.make();
  disposers.push(() => dirs.remove(home));
  const root = join(home, "plugins");
  for (const [name, hooks] of Object.entries(plugins)) writePlugin(root, name, { "index.js": pluginModule(hooks) });
  const host = new PluginHost({ home, watch: true });
  disposers.push(() => host.dispose());
  const errors: PluginError[] = [];
  const changes: PluginInfo[][] = [];
  host.onDidError((error) => errors.push(error));
  host.onDidChange((plugins) => changes.push(plugins));
  await host.start();
  const summaryOf = async () => {
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    return run.kind === "result" ? run.value.summary : run.kind;
  };
  return { host, root, errors, changes, summaryOf };
}

describe("hot reload", () => {
  it("serves the new version on the next call after an (atomic) save", async () => {
    const { host, root, changes, summaryOf } = await watchedHost({ live: summaryHook("v1") });
    expect(await summaryOf()).toBe("v1");
    // Waits for the host to say the new generation is active, however long a loaded machine takes
    // (how soon: bench/plugins.mjs); from then on, calls get it.
    const reloaded = new Promise<void>((resolve) => {
      const watch = host.onDidChange(([live]) => {
        if (live?.generation !== 2 || live.status !== "active") return;
        watch.dispose();
        resolve();
      });
    });
    atomicSave(join(root, "live", "index.js"), pluginModule(summaryHook("v2")));
    await reloaded;
    expect(await summaryOf()).toBe("v2");
    expect(changes.at(-1)![0]).toMatchObject({ id: "global:live", generation: 2, status: "active" });
  });

  it("lets a call in flight finish on the old version while new calls go to the new one", async () => {
    const lines: string[] = [];
    disposers.push(addLogSink((_level, message) => lines.push(message)).dispose);
    const { host, root } = await watchedHost({ live: summaryHook("old", 600) });
    const inFlight = host.runCompactHook(compactEvent(), { settings: settings() });
    await eventually(() => lines.find((line) => line === "[plugin live] started old"), 10_000, "the old call to start");

    atomicSave(join(root, "live", "index.js"), pluginModule(summaryHook("new")));
    await eventually(async () => ((await host.list())[0]!.generation === 2 ? true : undefined), 10_000, "generation 2");
    const fresh = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(fresh.kind === "result" && [fresh.value.summary, fresh.plugin.generation]).toEqual(["new", 2]);

    const old = await inFlight;
    expect(old.kind === "result" && [old.value.summary, old.plugin.generation]).toEqual(["old", 1]);
    expect(old.errors).toEqual([]);
  });

  it("keeps the old version serving when the saved one does not load, and reports why", async () => {
    const { host, root, errors, summaryOf } = await watchedHost({ live: summaryHook("v1") });
    const file = join(root, "live", "index.js");
    atomicSave(file, "export default { name: 'live', apiVersion: 1, hooks: { session_before_compact( { } };");
    const error = await eventually(() => errors.find((candidate) => candidate.kind === "activation"), 10_000, "the activation error");
    expect(error).toMatchObject({ pluginId: "global:live", generation: 2, hook: null, message: expect.stringContaining("SyntaxError") });
    expect(await summaryOf()).toBe("v1");
    const [info] = await host.list();
    expect(info).toMatchObject({ status: "active", generation: 1, lastError: { kind: "activation" } });

    atomicSave(file, pluginModule(summaryHook("v3")));
    await eventually(async () => ((await summaryOf()) === "v3" ? true : undefined), 10_000, "the fixed version");
    expect((await host.list())[0]).toMatchObject({ status: "active", generation: 3 });
    expect((await host.list())[0]!.lastError).toBeUndefined();
  });

  it("reloads on a change to any file of the plugin (a TypeScript module it imports)", async () => {
    const { host, root, summaryOf } = await watchedHost({});
    writePlugin(root, "typed", {
      "index.ts": `import { summary } from "./summary.js";\nexport default { name: "typed", apiVersion: 1, hooks: { session_before_compact: () => ({ compaction: { summary: summary(), firstKeptEntryId: "u2", tokensBefore: null } }) } };`,
      "summary.ts": `export const summary = (): string => "first";`,
    });
    await eventually(async () => ((await summaryOf()) === "first" ? true : undefined), 10_000, "the new plugin folder to load");
    atomicSave(join(root, "typed", "summary.ts"), `export const summary = (): string => "second";`);
    await eventually(async () => ((await summaryOf()) === "second" ? true : undefined), 10_000, "the edited import");
    expect((await host.list())[0]!.generation).toBe(2);
  });

  it("drops a plugin whose folder is deleted", async () => {
    const { host, root } = await watchedHost({ gone: summaryHook("x"), stays: summaryHook("y") });
    rmSync(join(root, "gone"), { recursive: true });
    await eventually(async () => ((await host.list()).length === 1 ? true : undefined), 10_000, "the plugin to be dropped");
    expect((await host.list())[0]!.name).toBe("stays");
  });

  it("plugins/reload re-reads a plugin without a file event", async () => {
    const home = dirs.make();
    disposers.push(() => dirs.remove(home));
    const root = join(home, "plugins");
    writePlugin(root, "manual", { "index.js": pluginModule(summaryHook("before")) });
    const host = new PluginHost({ home, watch: false });
    disposers.push(() => host.dispose());
    await host.start();
    writePlugin(root, "manual", { "index.js": pluginModule(summaryHook("after")) });
    const infos = await host.reload("global:manual");
    expect(infos[0]!.generation).toBe(2);
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind === "result" && run.value.summary).toBe("after");
    await expect(host.reload("global:nope")).rejects.toMatchObject({ code: "plugin_not_found" });
  });
});
