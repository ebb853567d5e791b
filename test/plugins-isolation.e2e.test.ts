/**
 * Plugins that hang, eat their heap or keep crashing (docs/design.md#isolation): each only ever takes down
 * its own worker thread. The daemon keeps answering, reports what happened (`plugins/didError`),
 * compacts with its own summarizer, and disables a plugin that dies five times in three minutes.
 * No model is configured here: the default path is the extractive summarizer.
 */
import { PluginsReload, SessionGet } from "@base-context/protocol";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compact, compactableSession, hookPlugin, pluginInfo, usePluginDaemons, waitForPlugin } from "./support/plugins.js";
import { waitFor } from "./support/wait.js";

const daemons = usePluginDaemons();
const { dirs } = daemons;

async function daemonWith(plugins: Record<string, Record<string, string>>, settings: Record<string, unknown> = {}) {
  return daemons.start({ plugins, settings });
}

describe("a plugin stuck in while (true)", () => {
  it("only blocks its own thread: the daemon answers meanwhile, the worker is terminated at the timeout and the default summary is used", async () => {
    const HOOK_TIMEOUT_MS = 3_000;
    const marker = join(dirs.make("bc-plugins-marker-"), "looping");
    const { client, project, news } = await daemonWith(
      {
        spinner: hookPlugin({
          preamble: 'import { writeFileSync } from "node:fs";',
          compact: `writeFileSync(${JSON.stringify(marker)}, "x");\nwhile (true) {}`,
        }),
      },
      { plugins: { hookTimeoutMs: HOOK_TIMEOUT_MS } },
    );
    const { sessionId } = await compactableSession(client, project);

    let settled = false;
    const compaction = compact(client, sessionId).finally(() => (settled = true));
    await waitFor(() => existsSync(marker), { timeoutMs: 20_000, message: "the hook to start looping" });
    const loopingSince = Date.now();

    // The hook never ends by itself: a daemon whose thread it held would never answer. The
    // compaction settles only after the hook's timeout: unsettled, the hook was still hanging.
    const answer = await client.request(SessionGet, { sessionId });
    expect(answer.entryCount).toBe(5);
    expect(settled).toBe(false);

    const result = await compaction;
    const hungForMs = Date.now() - loopingSince;
    expect(result).toMatchObject({ status: "committed", summarizer: "extractive" });
    expect(result.compaction?.fromHook).toBeUndefined();
    // Terminated at the timeout (plus the short grace and a loaded machine's slack), not later.
    expect(hungForMs).toBeLessThan(HOOK_TIMEOUT_MS + 5_000);
    const error = await waitFor(() => news.errors.find((e) => e.kind === "timeout"), { message: "a timeout report" });
    expect(error).toMatchObject({ pluginId: "global:spinner", hook: "session_before_compact" });
    // A fresh worker takes over for the next call.
    await waitForPlugin(client, "spinner", (info) => info.status === "active");
  });
});

describe("a plugin that exhausts its heap", () => {
  it("is reported as oom, its worker replaced, and the compaction uses the default summary", async () => {
    const { client, project, news } = await daemonWith(
      { hog: hookPlugin({ compact: "const hog = [];\nwhile (true) hog.push(new Array(1_000_000).fill(Math.random()));" }) },
      { plugins: { hookTimeoutMs: 60_000 } },
    );
    const { sessionId } = await compactableSession(client, project);

    const result = await compact(client, sessionId);

    expect(result).toMatchObject({ status: "committed", summarizer: "extractive" });
    const error = await waitFor(() => news.errors[0], { message: "plugins/didError" });
    expect(error).toMatchObject({ pluginId: "global:hog", hook: "session_before_compact", kind: "oom" });
    expect((await client.request(SessionGet, { sessionId })).entryCount).toBe(6);
  });
});

describe("the crash breaker", () => {
  it("disables a plugin after five crashes within three minutes, until plugins/reload", async () => {
    const { client, project, news } = await daemonWith({ crasher: hookPlugin({ compact: "process.exit(3);" }) });

    for (let crash = 1; crash <= 5; crash++) {
      const { sessionId } = await compactableSession(client, project);
      const result = await compact(client, sessionId);
      expect(result).toMatchObject({ status: "committed", summarizer: "extractive" });
      await waitFor(() => news.errors.filter((e) => e.kind === "crash" && e.hook === "session_before_compact").length >= crash, {
        message: `crash report ${crash}`,
      });
    }

    const disabled = await waitForPlugin(client, "crasher", (info) => info.status === "disabled");
    expect(disabled.lastError?.message).toContain("disabled after 5 crashes");

    // Disabled: the next compaction does not even try it.
    const reports = news.errors.length;
    const { sessionId } = await compactableSession(client, project);
    expect((await compact(client, sessionId)).summarizer).toBe("extractive");
    expect(news.errors.length).toBe(reports);

    await client.request(PluginsReload, { id: "global:crasher" });
    expect((await pluginInfo(client, "crasher"))?.status).toBe("active");
  });
});
