/**
 * What crosses a plugin's boundary is bounded (`plugins.maxMessageBytes`, both ways) and so is
 * every summary a plugin hands back (`limits.maxSummaryBytes`): an over-size result is that
 * plugin's failure, reported, and the daemon's default path goes on.
 */
import type { PluginError } from "@base-context/protocol";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PluginHost } from "./host.js";
import { compactEvent, pluginModule, settings, writePlugin } from "./test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const disposers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

async function hostWith(plugins: Record<string, string>) {
  const home = dirs.make();
  disposers.push(() => dirs.remove(home));
  for (const [name, hooks] of Object.entries(plugins)) writePlugin(join(home, "plugins"), name, { "index.js": pluginModule(hooks) });
  const host = new PluginHost({ home, watch: false });
  disposers.push(() => host.dispose());
  const errors: PluginError[] = [];
  host.onDidError((error) => errors.push(error));
  await host.start();
  return { host, errors };
}

const MiB = 1024 * 1024;
const returning = (summaryExpression: string) =>
  `session_before_compact(event) { return { compaction: { summary: ${summaryExpression}, firstKeptEntryId: "u2", tokensBefore: 1 } }; }`;

describe("plugins.maxMessageBytes and limits.maxSummaryBytes", () => {
  it("refuses a 64 MB result in the plugin's worker: too-large, reported, and the plugin keeps serving", { timeout: 180_000 }, async () => {
    const { host, errors } = await hostWith({ huge: returning(`"x".repeat(64 * ${MiB}) + (event.preparation.previousSummary ?? "")`) });
    // Building and measuring 64 MB in the worker takes seconds on a busy machine: the hook's time
    // limit is not what this test checks, so it is set far above that.
    const generous = settings({ hookTimeoutMs: 60_000 });
    const before = process.memoryUsage().heapUsed;
    for (let round = 0; round < 2; round++) {
      const event = compactEvent();
      // The second round hands a large previous summary in, as a later compaction would.
      if (round === 1) event.preparation.previousSummary = "p".repeat(MiB);
      const run = await host.runCompactHook(event, { settings: generous });
      expect(run.kind).toBe("none");
      expect(run.errors).toEqual([
        expect.objectContaining({
          pluginId: "global:huge",
          kind: "too-large",
          message: expect.stringContaining("over plugins.maxMessageBytes"),
        }),
      ]);
    }
    // The 64 MB never reached this thread.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(32 * MiB);
    expect(errors.map((error) => error.kind)).toEqual(["too-large", "too-large"]);
    expect((await host.list())[0]).toMatchObject({ status: "active", generation: 1 });
  });

  it("applies the session's limit: the same result passes under a larger one", async () => {
    const { host } = await hostWith({ medium: returning(`"m".repeat(${MiB} / 2)`) });
    const small = await host.runCompactHook(compactEvent(), { settings: settings({ maxMessageBytes: 256 * 1024 }) });
    expect(small.errors.map((error) => error.kind)).toEqual(["too-large"]);
    const larger = settings();
    larger.limits.maxSummaryBytes = MiB;
    const run = await host.runCompactHook(compactEvent(), { settings: larger });
    expect(run.kind === "result" && run.value.summary.length).toBe(MiB / 2);
  });

  it("rejects a summary over limits.maxSummaryBytes as an invalid result", async () => {
    const { host } = await hostWith({ wordy: returning(`"w".repeat(5000)`) });
    const limited = settings();
    limited.limits.maxSummaryBytes = 4096;
    const run = await host.runCompactHook(compactEvent(), { settings: limited });
    expect(run.kind).toBe("none");
    expect(run.errors).toEqual([
      expect.objectContaining({ kind: "invalid-result", message: "the summary is 5000 bytes, over limits.maxSummaryBytes (4096 bytes)" }),
    ]);
  });

  it("does not send an event over the limit: the plugin is skipped with a too-large report", async () => {
    const { host } = await hostWith({ never: `session_before_compact() { throw new Error("must not run"); }` });
    const event = compactEvent();
    event.preparation.previousSummary = "s".repeat(300 * 1024);
    const run = await host.runCompactHook(event, { settings: settings({ maxMessageBytes: 256 * 1024 }) });
    expect(run.errors).toEqual([
      expect.objectContaining({
        kind: "too-large",
        message: expect.stringMatching(/^the session_before_compact event is \d+ bytes, over/),
      }),
    ]);
  });

  it("fails the call of a plugin that posts an over-size message past its bootstrap", async () => {
    const { host } = await hostWith({
      sneaky: `async session_before_compact() {
        const { parentPort } = await import("node:worker_threads");
        parentPort.postMessage('{"t":"return","callId":1,"value":"' + "z".repeat(300 * 1024) + '"}');
        await new Promise((resolve) => setTimeout(resolve, 60_000));
      }`,
    });
    const run = await host.runCompactHook(compactEvent(), { settings: settings({ maxMessageBytes: 256 * 1024 }) });
    expect(run.errors).toEqual([
      expect.objectContaining({ kind: "too-large", message: "a message from the plugin is over plugins.maxMessageBytes (262144 bytes)" }),
    ]);
  });

  it("refuses a ctx.countTokens request over the limit inside the plugin", async () => {
    const { host } = await hostWith({
      counter: `async session_before_compact(event, ctx) {
        try { await ctx.countTokens("c".repeat(300 * 1024)); return undefined; }
        catch (error) { return { compaction: { summary: error.message, firstKeptEntryId: "u2", tokensBefore: 1 } }; }
      }`,
    });
    const run = await host.runCompactHook(compactEvent(), { settings: settings({ maxMessageBytes: 256 * 1024 }) });
    expect(run.kind === "result" && run.value.summary).toMatch(
      /^ctx\.countTokens: the request is \d+ bytes, over plugins\.maxMessageBytes \(262144 bytes\)$/,
    );
  });
});
