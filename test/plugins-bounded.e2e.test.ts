/**
 * Plugins under the bounds of docs/plugins.md#what-a-trusted-plugin-can-do: when the stdio
 * daemon cannot move its protocol off file descriptor 1, plugins run in child processes (never in
 * its threads, where a write to fd 1 would reach the client), even under a flood of requests;
 * `plugins/list` says how each plugin runs and whether it is trusted; a hook that keeps a
 * compaction waiting is reported in its `$/progress`.
 */
import { PluginsList, SessionGet, type CompactionProgress } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { recordScore } from "./adversarial/scoreboard.js";
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
    recordScore({ area: "fd-1 guard", scenario: "helper failed, 1,500-request flood, plugin writes fd 1", tried: 1, survived: 1, lost: 0 });
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
    recordScore({ area: "plugins (worker)", scenario: "slow hook reported as progress", tried: 1, survived: 1, lost: 0 });
  });
});

/**
 * What a plugin can do to the agent that started the daemon: a worker thread's `process.ppid` is
 * the agent (the test process here), which it may signal; a plugin process's parent is the
 * daemon's side of the confinement, and `process.kill` reaches only the plugin's own process.
 * Signal 0 only asks whether a signal could be sent: nothing is killed.
 */
const probesParent = hookPlugin({
  compact: `let signalled;
try { process.kill(process.ppid, 0); signalled = "sent"; } catch (error) { signalled = String(error.code ?? error.message); }
${replaceSummary("probed").replace('details: {"by":"test"}', "details: { ppid: process.ppid, signalled }")}`,
});

for (const isolation of ["worker", "process"] as const) {
  describe(`process.kill(process.ppid) from a plugin (${isolation} isolation)`, { timeout: 60_000 }, () => {
    it(isolation === "worker" ? "reaches the agent that started the daemon" : "cannot reach the agent", async () => {
      const { client, project } = await daemons.start({ plugins: { probe: probesParent }, settings: { plugins: { isolation } } });
      const { sessionId } = await compactableSession(client, project);
      const result = await compact(client, sessionId);
      expect(result).toMatchObject({ status: "committed", summarizer: "plugin:global:probe" });
      const details = result.entry!.details as { ppid: number; signalled: string };
      if (isolation === "worker") {
        expect(details).toMatchObject({ ppid: process.pid, signalled: "sent" });
      } else {
        expect(details.ppid).not.toBe(process.pid);
        expect(details.signalled).not.toBe("sent");
      }
      recordScore({ area: `plugins (${isolation})`, scenario: "process.kill(process.ppid) probed", tried: 1, survived: 1, lost: 0 });
    });
  });
}
