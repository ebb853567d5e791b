/**
 * A plugin writing straight to file descriptor 1 (`fs.writeSync(1, …)`, past the worker's piped
 * stdout) must never reach the client: the stdio daemon writes the protocol to its own copy of
 * the descriptor and points fd 1 at stderr (or /dev/null). The forged frame below would arrive as
 * a daemon notification, and the garbage after it would stop the client's frame reader.
 */
import { connect, SessionGet, type BaseContextClient } from "@base-context/protocol";
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DAEMON_MAIN, startDaemon } from "./support/daemon.js";
import {
  COMPACT_EVERYTHING,
  compact,
  compactableSession,
  hookPlugin,
  pluginsRoot,
  replaceSummary,
  usePluginDaemons,
  writePlugin,
} from "./support/plugins.js";
import { waitFor } from "./support/wait.js";
import { storeEnvFor } from "./support/engine.js";
import { TEST_NODE } from "./support/test-node.js";

const FORGED = JSON.stringify({ jsonrpc: "2.0", method: "forged/notification", params: { from: "a plugin" } });
const STRAY = `Content-Length: ${Buffer.byteLength(FORGED)}\r\n\r\n${FORGED}garbage that is no frame\r\n\r\n`;
const writesFd1 = hookPlugin({
  preamble: 'import { writeSync } from "node:fs";',
  compact: `writeSync(1, ${JSON.stringify(STRAY)});\n${replaceSummary("written after the stray bytes")}`,
});

/** Writes the stray bytes as soon as it is loaded, before any hook runs. */
const writesFd1WhenLoaded = hookPlugin({
  preamble: `import { writeSync } from "node:fs";\nwriteSync(1, ${JSON.stringify(STRAY)});`,
  compact: replaceSummary("loaded after the stray bytes"),
});

const daemons = usePluginDaemons();

/** Every notification method the client received, and every byte it read from the daemon. */
function observe(client: BaseContextClient, stdout: NodeJS.ReadableStream | null) {
  const methods: string[] = [];
  let bytes = "";
  stdout?.on("data", (chunk: Buffer) => (bytes += chunk.toString("utf8")));
  // Called for every notification no other handler takes, forged ones included.
  client.connection.onNotification((method: string) => void methods.push(method));
  return { methods, bytes: () => bytes };
}

describe("a plugin writing to file descriptor 1", () => {
  it("never reaches the client (socket stdio, as Node clients spawn the daemon)", async () => {
    const { d, client, project } = await daemons.start({ plugins: { stray: writesFd1 } });
    const seen = observe(client, d.process.stdout);
    for (let round = 0; round < 2; round++) {
      const { sessionId } = await compactableSession(client, project);
      const result = await compact(client, sessionId);
      expect(result).toMatchObject({ status: "committed", summarizer: "plugin:global:stray" });
      expect((await client.request(SessionGet, { sessionId })).entryCount).toBe(6);
    }
    expect(seen.bytes()).not.toContain("forged/notification");
    expect(seen.bytes()).not.toContain("garbage that is no frame");
    expect(seen.methods).not.toContain("forged/notification");
  });

  it("never reaches the client from a plugin loaded by the first request after initialize (socket stdio)", async () => {
    // Over a socket the protocol starts on fd 1 and moves to its own descriptor while the daemon
    // serves (docs/architecture.md#the-stdio-protocols-own-descriptor). A compaction sent with
    // `initialize`, before the daemon is even built, needs the plugin at once: the plugin must
    // still load only after the move.
    const home = daemons.dirs.make("bc-stdout-home-");
    const project = daemons.dirs.make("bc-stdout-project-");
    writeFileSync(join(home, "settings.json"), JSON.stringify(COMPACT_EVERYTHING));
    const first = daemons.closeAfterTest(await startDaemon({ home }));
    const { sessionId } = await compactableSession(first.client, project);
    await first.close();
    writePlugin(pluginsRoot(home), "early", writesFd1WhenLoaded);

    const d = daemons.closeAfterTest(await startDaemon({ home, initialize: false }));
    const seen = observe(d.client, d.process.stdout);
    const [, result] = await Promise.all([d.client.initialize({}), compact(d.client, sessionId)]);

    expect(result).toMatchObject({ status: "committed", summarizer: "plugin:global:early" });
    expect(seen.bytes()).not.toContain("forged/notification");
    expect(seen.bytes()).not.toContain("garbage that is no frame");
    expect(seen.methods).not.toContain("forged/notification");
  });

  describe("over pipes, with stderr to a file", () => {
    const opened: { close(): void }[] = [];
    afterEach(() => {
      for (const item of opened.splice(0)) item.close();
    });

    it("goes to the daemon's stderr instead", async () => {
      const home = daemons.dirs.make("bc-stdout-home-");
      const project = daemons.dirs.make("bc-stdout-project-");
      writeFileSync(join(home, "settings.json"), JSON.stringify(COMPACT_EVERYTHING));
      writePlugin(pluginsRoot(home), "stray", writesFd1);
      const stderrPath = join(home, "stderr.log");
      const stderrFd = openSync(stderrPath, "w");
      // `| cat`: the daemon's stdout is a real pipe (as Python's subprocess makes), not a socket.
      const child = spawn("/bin/sh", ["-c", 'exec "$0" "$1" serve | cat', TEST_NODE, DAEMON_MAIN], {
        stdio: ["pipe", "pipe", stderrFd],
        env: { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), OPENAI_API_KEY: "" },
      });
      closeSync(stderrFd);
      const exited = new Promise((resolve) => child.once("exit", resolve));
      const client = connect(child.stdout!, child.stdin!);
      opened.push({
        close: () => {
          child.stdin!.end();
          return client.dispose();
        },
      });
      const seen = observe(client, child.stdout);
      await client.initialize({});

      const { sessionId } = await compactableSession(client, project);
      expect(await compact(client, sessionId)).toMatchObject({ status: "committed", summarizer: "plugin:global:stray" });
      expect((await client.request(SessionGet, { sessionId })).entryCount).toBe(6);
      expect(seen.bytes()).not.toContain("forged/notification");
      await waitFor(() => readFileSync(stderrPath, "utf8").includes(STRAY), { message: "the stray bytes in the daemon's stderr" });

      await client.shutdown();
      child.stdin!.end();
      await exited;
    });
  });
});
