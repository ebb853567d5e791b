/**
 * The daemon runs the compiled host (dist/), whose workers load compiled `.js` modules, while the
 * other tests run the TypeScript sources. This one runs the build in a plain Node process (skipped
 * when there is no build; `pnpm test` builds first).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { temporaryDir, writePlugin } from "./test-support.js";

const distIndex = fileURLToPath(new URL("../../dist/plugins/index.js", import.meta.url));
const disposers: (() => void)[] = [];
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose();
});

describe("the compiled plugin host", () => {
  it.skipIf(!existsSync(distIndex)).each(["worker", "process"])(
    "loads a TypeScript plugin that imports the SDK and answers a hook (%s isolation)",
    async (isolation) => {
      const home = temporaryDir();
      disposers.push(home.remove);
      writePlugin(join(home.dir, "plugins"), "typed", {
        "index.ts": `import { definePlugin, serializeConversation } from "@base-context/plugin-sdk";
        const text: string = serializeConversation([{ role: "user", content: "hi" }]);
        export default definePlugin({ name: "typed", apiVersion: 1, hooks: { session_before_tree: () => ({ summary: { summary: text } }) } });`,
    });
    const script = `
      const { PluginHost } = await import(${JSON.stringify(pathToFileURL(distIndex).href)});
      const host = new PluginHost({ home: ${JSON.stringify(home.dir)}, watch: false, isolation: () => ${JSON.stringify(isolation)} });
      await host.start();
      const settings = { plugins: { enabled: true, hookTimeoutMs: 5000, order: [], maxMessageBytes: 8388608, isolation: "worker" }, limits: { maxSummaryBytes: 1048576 } };
      const event = { preparation: { targetId: "a", oldLeafId: null, commonAncestorId: null, entriesToSummarize: [], userWantsSummary: true } };
      const run = await host.runTreeHook(event, { settings });
      await host.dispose();
      process.stdout.write(JSON.stringify(run));`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { timeout: 20_000 });
    expect(JSON.parse(stdout)).toMatchObject({ kind: "result", value: { summary: "[User]: hi" }, plugin: { id: "global:typed" } });
  });
});
