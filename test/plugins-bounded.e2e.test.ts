/**
 * Plugins under the bounds of docs/plugins.md#what-a-trusted-plugin-can-do: when the stdio
 * daemon cannot move its protocol off file descriptor 1, plugins run in child processes (never in
 * its threads, where a write to fd 1 would reach the client), even under a flood of requests;
 * `plugins/list` says how each plugin runs and whether it is trusted; a hook that keeps a
 * compaction waiting is reported in its `$/progress`.
 */
import { PluginsList, SessionGet, type CompactionProgress } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { compact, compactableSession, hookPlugin, replaceSummary, usePluginDaemons } from "./support/plugins.js";

const FORGED = JSON.stringify({ jsonrpc: "2.0", method: "forged/notification", params: { from: "a plugin" } });
const STRAY = `Content-Length: ${Buffer.byteLength(FORGED)}\r\n\r\n${FORGED}garbage that is no frame\r\n\r\n`;

/** Writes the stray bytes to fd 1 on its first hook call (not when loaded). */
const writesFd1OnFirstCall = hookPlugin({
  preamble: 'import { writeSync } from "node:fs";\nlet calls = 0;',
  compact: `if (calls++ === 0) writeSync(1, ${JSON.stringify(STRAY)});\n${replaceSummary("written after the stray bytes")}`,
});

const FLOOD = 1500;

const daemons = usePluginDaemons();

describe("plugins when fd 1 cannot be guarded", { timeout: 120_000 }, () => {
  it("run in child processes: under a flood of 1,500 requests, 0 bytes of a plugin's fd-1 write reach the client", async () => {
    // A helper given no time at all cannot send fd 1 back: the protocol stays on fd 1.
    const { d, client, project } = await daemons.start({
      plugins: { stray: writesFd1OnFirstCall },
      env: { BASE_CONTEXT_FD1_HELPER_TIMEOUT_MS: "0" },
    });
    let bytes = "";
    d.process.stdout!.on("data", (chunk: Buffer) => (bytes += chunk.toString("latin1")));
    const methods: string[] = [];
    client.connection.onNotification((method: string) => void methods.push(method));
    const { sessionId } = await compactableSession(client, project);

    const flood = Array.from({ length: FLOOD }, () => client.request(SessionGet, { sessionId }));
    const compaction = compact(client, sessionId);
    const [replies, result] = await Promise.all([Promise.all(flood), compaction]);

    expect(replies.every((reply) => reply.session.id === sessionId)).toBe(true);
    expect(result).toMatchObject({ status: "committed", summarizer: "plugin:global:stray" });
    expect(bytes).not.toContain("forged/notification");
    expect(bytes).not.toContain("garbage that is no frame");
    expect(methods).not.toContain("forged/notification");
    const { plugins } = await client.request(PluginsList, {});
    expect(plugins).toEqual([expect.objectContaining({ name: "stray", isolation: "process", trusted: true })]);
    expect(d.stderr()).toContain("plugins: file descriptor 1 still carries the protocol");
  });
});

describe("plugins/list", () => {
  it("says each plugin's trust and isolation", async () => {
    const { client } = await daemons.start({
      plugins: { threaded: hookPlugin({ compact: replaceSummary("x") }) },
      settings: { plugins: { isolation: "worker" } },
    });
    const { plugins } = await client.request(PluginsList, {});
    expect(plugins).toEqual([expect.objectContaining({ name: "threaded", isolation: "worker", trusted: true })]);
  });
});

describe("a hook that keeps a compaction waiting", { timeout: 60_000 }, () => {
  it('is reported in the run\'s $/progress ("Waiting for plugin …") while it runs', async () => {
    const slow = hookPlugin({ compact: `await new Promise((resolve) => setTimeout(resolve, 2500));\n${replaceSummary("slow but here")}` });
    const { client, project } = await daemons.start({ plugins: { slow } });
    const { sessionId } = await compactableSession(client, project);
    const progress: CompactionProgress[] = [];
    client.onProgress<CompactionProgress>("slow-1", (value) => progress.push(value));

    const result = await compact(client, sessionId, { workDoneToken: "slow-1" });

    expect(result).toMatchObject({ status: "committed", summarizer: "plugin:global:slow" });
    const waits = progress.filter((value) => value.kind === "report" && value.message?.startsWith("Waiting for plugin global:slow"));
    expect(waits.length).toBeGreaterThan(0);
  });
});
