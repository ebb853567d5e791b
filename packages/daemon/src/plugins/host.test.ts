import type { PluginError } from "@base-context/protocol";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CancelledError } from "../errors.js";
import { addLogSink } from "../log.js";
import { PluginHost, type PluginHostOptions } from "./host.js";
import { compactEvent, eventually, pluginModule, settings, treeEvent, writeFiles, writePlugin } from "./test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const disposers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

/** A started host over a temporary home holding the given plain-JS plugins (name → hooks body). */
async function hostWith(plugins: Record<string, string>, options: Omit<PluginHostOptions, "home"> = {}) {
  const home = dirs.make();
  disposers.push(() => dirs.remove(home));
  for (const [name, hooks] of Object.entries(plugins)) writePlugin(join(home, "plugins"), name, { "index.js": pluginModule(hooks) });
  const host = new PluginHost({ home, watch: false, checkEvents: true, ...options });
  disposers.push(() => host.dispose());
  const errors: PluginError[] = [];
  host.onDidError((error) => errors.push(error));
  await host.start();
  return { host, home, errors };
}

const replaceSummary = (summary: string) =>
  `session_before_compact(event) { return { compaction: { summary: ${JSON.stringify(summary)}, firstKeptEntryId: event.preparation.firstKeptEntryId, tokensBefore: event.preparation.tokensBefore, details: { by: ${JSON.stringify(summary)} } } }; }`;

describe("PluginHost hook results", () => {
  it("replaces the compaction summary with a plugin's result and says which plugin version made it", async () => {
    const { host } = await hostWith({ summarizer: replaceSummary("custom summary") });
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run).toEqual({
      kind: "result",
      value: { summary: "custom summary", firstKeptEntryId: "u2", tokensBefore: 100, details: { by: "custom summary" } },
      plugin: { id: "global:summarizer", name: "summarizer", version: "1.0.0", generation: 1 },
      errors: [],
    });
  });

  it("cancels when a plugin returns { cancel: true }", async () => {
    const { host } = await hostWith({ guard: "session_before_compact() { return { cancel: true }; }" });
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind).toBe("cancel");
    expect(run.kind === "cancel" && run.plugin.id).toBe("global:guard");
  });

  it("treats a plugin returning nothing as no opinion, and runs no plugin when plugins are disabled", async () => {
    const { host } = await hostWith({ quiet: "session_before_compact() {}", summarizer: replaceSummary("x") });
    const quietLast = await host.runCompactHook(compactEvent(), { settings: settings({ order: ["summarizer"] }) });
    expect(quietLast.kind === "result" && quietLast.plugin.name).toBe("summarizer");
    expect(
      (await host.runCompactHook(compactEvent(), { settings: settings({ order: ["quiet", "summarizer"], enabled: false }) })).kind,
    ).toBe("none");
    const { host: onlyQuiet } = await hostWith({ quiet: "session_before_compact() { return null; }" });
    expect(await onlyQuiet.runCompactHook(compactEvent(), { settings: settings() })).toEqual({ kind: "none", errors: [] });
  });

  it("lets the first cancel win over results, whatever their order", async () => {
    const { host } = await hostWith({
      a: replaceSummary("from a"),
      b: "session_before_compact() { return { cancel: true }; }",
      c: "session_before_compact() { return { cancel: true }; }",
    });
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind === "cancel" && run.plugin.name).toBe("b");
    const reordered = await host.runCompactHook(compactEvent(), { settings: settings({ order: ["c"] }) });
    expect(reordered.kind === "cancel" && reordered.plugin.name).toBe("c");
  });

  it("lets the last result win: by name, or by plugins.order first", async () => {
    const { host } = await hostWith({ a: replaceSummary("from a"), b: replaceSummary("from b") });
    const byName = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(byName.kind === "result" && byName.value.summary).toBe("from b");
    const ordered = await host.runCompactHook(compactEvent(), { settings: settings({ order: ["b", "global:a"] }) });
    expect(ordered.kind === "result" && ordered.value.summary).toBe("from a");
  });

  it("reports a throwing plugin and goes on with the next one", async () => {
    const { host, errors } = await hostWith({
      a: `session_before_compact() { throw new TypeError("bad input"); }`,
      b: replaceSummary("from b"),
    });
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind === "result" && run.value.summary).toBe("from b");
    const expected = {
      pluginId: "global:a",
      version: "1.0.0",
      generation: 1,
      hook: "session_before_compact",
      kind: "exception",
      message: expect.stringMatching(/^TypeError: bad input \(at index\.js:\d+:\d+\)$/),
    };
    expect(run.errors).toEqual([expected]);
    expect(errors).toEqual([expected]);
    const [info] = await host.list();
    expect(info!.lastError).toMatchObject({
      kind: "exception",
      hook: "session_before_compact",
      message: expect.stringMatching(/^TypeError: bad input \(at index\.js:\d+:\d+\)$/),
    });
    expect(info!.status).toBe("active");
  });

  it("rejects an invalid result (unknown key, empty summary, not JSON) and continues on the default path", async () => {
    const { host } = await hostWith({
      a: `session_before_compact() { return { sumary: "typo" }; }`,
      b: `session_before_compact(e) { return { compaction: { summary: "", firstKeptEntryId: "u2", tokensBefore: 1 } }; }`,
      c: `session_before_compact() { return { compaction: { summary: "s", firstKeptEntryId: "u2", tokensBefore: 1n } }; }`,
    });
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind).toBe("none");
    expect(run.errors.map((error) => [error.pluginId, error.kind])).toEqual([
      ["global:a", "invalid-result"],
      ["global:b", "invalid-result"],
      ["global:c", "invalid-result"],
    ]);
    expect(run.errors[0]!.message).toContain("sumary");
    expect(run.errors[1]!.message).toContain("summary must not be empty");
    expect(run.errors[2]!.message).toContain("not plain JSON");
  });

  it("rejects a firstKeptEntryId outside the prepared range, and accepts one the caller lists as kept", async () => {
    const outside = `session_before_compact() { return { compaction: { summary: "s", firstKeptEntryId: "elsewhere", tokensBefore: 1 } }; }`;
    const { host } = await hostWith({ a: outside });
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind).toBe("none");
    expect(run.errors[0]).toMatchObject({
      kind: "invalid-result",
      message: expect.stringContaining('"elsewhere" is not an entry of the prepared range'),
    });
    const allowed = await host.runCompactHook(compactEvent(), { settings: settings(), keptEntryIds: ["u2", "a2", "elsewhere"] });
    expect(allowed.kind).toBe("result");
  });

  it("accepts any entry of the prepared range as firstKeptEntryId (summarized or kept)", async () => {
    const { host } = await hostWith({
      a: `session_before_compact() { return { compaction: { summary: "s", firstKeptEntryId: "a1", tokensBefore: null } }; }`,
      b: `session_before_compact() { return { compaction: { summary: "s", firstKeptEntryId: "a2", tokensBefore: null } }; }`,
    });
    const run = await host.runCompactHook(compactEvent(), { settings: settings({ order: ["b", "a"] }) });
    expect(run.kind === "result" && run.value.firstKeptEntryId).toBe("a1");
    expect(run.errors).toEqual([]);
  });

  it("runs session_before_tree: summary results, cancel, validation", async () => {
    const { host } = await hostWith({
      a: `session_before_tree(event) { return { summary: { summary: "left " + event.preparation.entriesToSummarize.length, details: { n: 1 } } }; }`,
    });
    const run = await host.runTreeHook(treeEvent(), { settings: settings() });
    expect(run.kind === "result" && run.value).toEqual({ summary: "left 3", details: { n: 1 } });
    // A compaction-shaped result is not a tree result.
    const { host: other } = await hostWith({ b: `session_before_tree() { return { compaction: {} }; }` });
    const invalid = await other.runTreeHook(treeEvent(), { settings: settings() });
    expect(invalid.kind).toBe("none");
    expect(invalid.errors[0]!.kind).toBe("invalid-result");
  });

  it("skips plugins that do not implement the hook", async () => {
    const { host } = await hostWith({ onlyTree: `session_before_tree() { return { cancel: true }; }` });
    expect((await host.runCompactHook(compactEvent(), { settings: settings() })).kind).toBe("none");
    expect((await host.list())[0]!.hooks).toEqual(["session_before_tree"]);
  });
});

describe("PluginHost loading", () => {
  it("lists a folder that is not a valid plugin with status error and the reason", async () => {
    const home = dirs.make();
    disposers.push(() => dirs.remove(home));
    const root = join(home, "plugins");
    writeFiles(join(root, "no-manifest"), { "index.js": "export default {}" });
    writePlugin(root, "future", { "index.js": pluginModule("") }, { apiVersion: 99 });
    writePlugin(root, "wrong-export", { "index.js": "export const x = 1;" });
    writePlugin(root, "bad-hook", { "index.js": pluginModule("session_before_compaction() {}") });
    const host = new PluginHost({ home, watch: false });
    disposers.push(() => host.dispose());
    await host.start();
    const byName = Object.fromEntries((await host.list()).map((info) => [info.name, info]));
    expect(Object.values(byName).map((info) => info.status)).toEqual(["error", "error", "error", "error"]);
    expect(byName["no-manifest"]!.lastError!.message).toContain("no package.json");
    expect(byName["future"]!.lastError!.message).toContain("apiVersion 99 is not supported");
    expect(byName["wrong-export"]!.lastError!.message).toContain("no default export");
    expect(byName["bad-hook"]!.lastError!.message).toContain('unknown hook "session_before_compaction"');
    expect(byName["bad-hook"]!.lastError!.kind).toBe("activation");
  });

  it("gives up on a plugin whose module never finishes loading, without blocking the daemon", async () => {
    const home = dirs.make();
    disposers.push(() => dirs.remove(home));
    writePlugin(join(home, "plugins"), "stuck", { "index.js": "for (;;) {}\nexport default {};" });
    const host = new PluginHost({ home, watch: false, activationTimeoutMs: 300 });
    disposers.push(() => host.dispose());
    // The module never finishes loading: that start() returns at all is the timeout's doing. The
    // daemon's thread runs meanwhile: a 10 ms timer fires before the 300 ms timeout, however busy the machine.
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    disposers.push(() => clearInterval(ticker));
    await host.start();
    expect(ticks).toBeGreaterThan(0);
    expect((await host.list())[0]).toMatchObject({
      status: "error",
      lastError: { kind: "activation", message: "the plugin did not load within 300 ms" },
    });
  });

  it("runs a TypeScript plugin with types, enums and .js-style relative imports, without a build step", async () => {
    const home = dirs.make();
    disposers.push(() => dirs.remove(home));
    writePlugin(join(home, "plugins"), "typed", {
      "src/index.ts": `
        import { definePlugin, type CompactHookEvent } from "@base-context/plugin-sdk";
        import { shout, Mode } from "./util.js";
        interface Options { mode: Mode }
        const options: Options = { mode: Mode.Loud };
        export default definePlugin({
          name: "typed",
          apiVersion: 1,
          hooks: {
            session_before_compact(event: CompactHookEvent) {
              const summary: string = shout("typed", options.mode);
              return { compaction: { summary, firstKeptEntryId: event.preparation.firstKeptEntryId, tokensBefore: null } };
            },
          },
        });`,
      "src/util.ts": `export enum Mode { Quiet, Loud }\nexport function shout(text: string, mode: Mode): string { return mode === Mode.Loud ? text.toUpperCase() : text; }\n`,
    });
    const host = new PluginHost({ home, watch: false });
    disposers.push(() => host.dispose());
    await host.start();
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind === "result" && run.value.summary).toBe("TYPED");
  });

  it("gives a plugin without node_modules the SDK's helpers (the daemon's own core)", async () => {
    const home = dirs.make();
    disposers.push(() => dirs.remove(home));
    const root = join(home, "plugins");
    writePlugin(root, "helpers", {
      "index.mjs": `
        import { definePlugin, serializeConversation, convertToLlm } from "@base-context/plugin-sdk";
        export default definePlugin({ name: "helpers", apiVersion: 1, hooks: {
          session_before_compact(event) {
            const summary = serializeConversation(convertToLlm(event.preparation.messagesToSummarize));
            return { compaction: { summary, firstKeptEntryId: event.preparation.firstKeptEntryId, tokensBefore: null } };
          } } });`,
    });
    const withHelpers = new PluginHost({ home, watch: false });
    disposers.push(() => withHelpers.dispose());
    await withHelpers.start();
    const run = await withHelpers.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind === "result" && run.value.summary).toBe("[User]: hello\n\n[Assistant]: hi");
  });
});

describe("PluginHost ctx services", () => {
  it("proxies ctx.countTokens and ctx.complete to the daemon's callbacks, with the caller attributed", async () => {
    const calls: unknown[] = [];
    const { host } = await hostWith(
      {
        writer: `async session_before_compact(event, ctx) {
          const tokens = await ctx.countTokens("four words right here");
          const answer = await ctx.complete({ system: "be brief", prompt: "summarize", maxTokens: 64 });
          return { compaction: { summary: answer.text + " / " + tokens, firstKeptEntryId: "u2", tokensBefore: 1, details: { model: answer.model } } };
        }`,
      },
      {
        services: {
          countTokens: (text, caller) => {
            calls.push(["countTokens", text, caller.pluginId, caller.hook]);
            return 4;
          },
          complete: async (request, signal, caller) => {
            calls.push(["complete", request, signal.aborted, caller.name, caller.generation]);
            return { text: "model says hi", model: "fake-model" };
          },
        },
      },
    );
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind === "result" && run.value).toMatchObject({ summary: "model says hi / 4", details: { model: "fake-model" } });
    expect(calls).toEqual([
      ["countTokens", "four words right here", "global:writer", "session_before_compact"],
      ["complete", { system: "be brief", prompt: "summarize", maxTokens: 64 }, false, "writer", 1],
    ]);
  });

  it("reports a bad ctx.complete request to the plugin as an error it can catch", async () => {
    const { host } = await hostWith(
      {
        a: `async session_before_compact(event, ctx) {
          try { await ctx.complete({ maxTokens: 5 }); return { cancel: false }; }
          catch (error) { return { compaction: { summary: "caught: " + error.message, firstKeptEntryId: "u2", tokensBefore: 1 } }; }
        }`,
      },
      { services: { complete: async () => ({ text: "never" }) } },
    );
    const run = await host.runCompactHook(compactEvent(), { settings: settings() });
    expect(run.kind === "result" && run.value.summary).toContain("give exactly one of prompt or messages");
  });

  it("gives ctx.settings as a snapshot and hides the daemon's API key from the worker", async () => {
    process.env["BC_TEST_SECRET_KEY"] = "sk-secret";
    disposers.push(() => {
      delete process.env["BC_TEST_SECRET_KEY"];
    });
    const { host } = await hostWith(
      {
        a: `session_before_compact(event, ctx) {
          return { compaction: { summary: "s", firstKeptEntryId: "u2", tokensBefore: 1,
            details: { key: process.env.BC_TEST_SECRET_KEY ?? null, timeout: ctx.settings.plugins.hookTimeoutMs, plugin: ctx.plugin.name } } };
        }`,
      },
      { hiddenEnv: () => ["BC_TEST_SECRET_KEY"] },
    );
    const run = await host.runCompactHook(compactEvent(), { settings: settings({ hookTimeoutMs: 4321 }) });
    expect(run.kind === "result" && run.value.details).toEqual({ key: null, timeout: 4321, plugin: "a" });
  });

  it("aborts ctx.signal when the daemon cancels, and rejects the run with CancelledError", async () => {
    const lines: string[] = [];
    disposers.push(addLogSink((_level, message) => lines.push(message)).dispose);
    let completeSignal: AbortSignal | undefined;
    const { host } = await hostWith(
      {
        waiter: `async session_before_compact(event, ctx) {
          ctx.signal.addEventListener("abort", () => ctx.log("info", "aborted: " + ctx.signal.reason.name));
          await ctx.complete({ prompt: "slow", maxTokens: 5 }).catch(() => {});
          return new Promise(() => {});
        }`,
      },
      {
        services: {
          complete: (_request, signal) => {
            completeSignal = signal;
            return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
          },
        },
      },
    );
    const controller = new AbortController();
    const run = host.runCompactHook(compactEvent(), { settings: settings(), signal: controller.signal });
    await eventually(() => completeSignal, 5_000, "the model call");
    controller.abort(new CancelledError());
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(completeSignal!.aborted).toBe(true);
    await eventually(() => lines.find((line) => line === "[plugin waiter] aborted: AbortError"), 5_000, "the plugin's abort log");
  });
});
