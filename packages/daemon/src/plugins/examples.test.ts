/**
 * The example plugins as a user installs them: each folder copied into a plugins folder with no
 * node_modules, loaded by the real host. (Their behaviour is tested through the SDK harness next
 * to each example.)
 */
import type { SessionEntry } from "@base-context/protocol";
import { cpSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { PluginHost } from "./host.js";
import { compactEvent, settings, startedHost, type Disposers } from "./test-support.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const examplesDir = fileURLToPath(new URL("../../../../examples/plugins/", import.meta.url));
const disposers: Disposers = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

async function installedExamples(): Promise<PluginHost> {
  const home = dirs.make();
  disposers.push(() => dirs.remove(home));
  for (const name of readdirSync(examplesDir)) {
    cpSync(join(examplesDir, name), join(home, "plugins", name), {
      recursive: true,
      filter: (source) => basename(source) !== "node_modules" && !source.endsWith(".test.ts"),
    });
  }
  return startedHost(home, disposers);
}

describe("example plugins installed by copying their folder", () => {
  it("all load, with no node_modules of their own", async () => {
    const host = await installedExamples();
    const infos = await host.list();
    expect(infos.map((info) => [info.name, info.status, info.lastError?.message])).toEqual([
      ["decisions-artifacts", "active", undefined],
      ["openai-summarizer", "active", undefined],
      ["pinned-guard", "active", undefined],
    ]);
  });

  it("run together: the guard's cancel wins over the summarizers", async () => {
    const host = await installedExamples();
    const event = compactEvent();
    const label: SessionEntry = {
      type: "label",
      id: "l1",
      parentId: "a2",
      timestamp: "2024-01-01T00:00:01.000Z",
      targetId: "u1",
      label: "pinned",
    };
    event.branchEntries.push(label);
    const run = await host.runCompactHook(event, { settings: settings() });
    expect(run.kind === "cancel" && run.plugin.name).toBe("pinned-guard");
  });

  it("openai-summarizer reaches its own model through the daemon's lent openai package", async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            created: 0,
            model: "m",
            choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "from the alt model" } }],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    disposers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    process.env["ALT_SUMMARIZER_MODEL"] = "alt";
    process.env["ALT_SUMMARIZER_BASE_URL"] = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    disposers.push(() => {
      delete process.env["ALT_SUMMARIZER_MODEL"];
      delete process.env["ALT_SUMMARIZER_BASE_URL"];
    });
    const host = await installedExamples();
    const run = await host.runCompactHook(compactEvent(), {
      settings: settings({ order: ["decisions-artifacts", "pinned-guard", "openai-summarizer"] }),
    });
    expect(run.errors).toEqual([]);
    expect(run.kind === "result" && [run.plugin.name, run.value.summary]).toEqual(["openai-summarizer", "from the alt model"]);
  });
});
