/**
 * Adversarial rows for plugins: each misbehaving plugin is run against the real, built daemon in
 * both isolation modes. A row's "lost" counts a daemon or connection taken down, or a session
 * whose stored entries are not what was acknowledged; it must stay 0. What each mode can and
 * cannot stop is in docs/guarantees.md ("Plugins").
 */
import { SessionCreate, SessionGet, type BaseContextClient } from "@base-context/protocol";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type TestDaemon } from "../support/daemon.js";
import { appendAll, assistant, toolResult, user } from "../fixtures/e2e.js";
import { COMPACT_EVERYTHING, compact, hookPlugin, pluginsRoot, watchPlugins, writePlugin, type PluginNews } from "../support/plugins.js";
import { tempDirs } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";
import { recordScore } from "./scoreboard.js";

/** The Node release the daemons of this pass run on (an extra pass sets it; test/support/other-node.ts). */
const DAEMON_NODE_MAJOR = Number(process.env.BASE_CONTEXT_TEST_NODE_MAJOR ?? process.versions.node.split(".")[0]);

const SECRET = "sk-adversarial-plugin-secret-0123456789";
const FORGED = JSON.stringify({ jsonrpc: "2.0", method: "forged/notification", params: {} });
const summaryOf = (expression: string) =>
  `return { compaction: { summary: ${expression}, firstKeptEntryId: event.preparation.firstKeptEntryId, tokensBefore: event.preparation.tokensBefore } };`;

/** Scenario name → hook body; each plugin acts only on sessions whose first message names it. */
const SCENARIOS: Record<string, string> = {
  throws: `throw new Error("boom");`,
  hangs: `for (;;) {}`,
  "returns 64 MB": summaryOf(`"x".repeat(64 * 1024 * 1024) + (event.preparation.previousSummary ?? "")`),
  "writes to fd 1": `writeSync(1, ${JSON.stringify(`Content-Length: ${FORGED.length}\r\n\r\n${FORGED}garbage\r\n\r\n`)});\n${summaryOf('"pid " + process.pid')}`,
  "process.kill(process.pid)": `process.kill(process.pid, "SIGKILL");\nawait new Promise(() => {});`,
  "reads /proc environ": `const seen = [];
    for (const pid of ["self", String(process.ppid), String(process.pid)]) {
      try { seen.push(readFileSync("/proc/" + pid + "/environ", "utf8").includes(${JSON.stringify(SECRET)}) ? "KEY" : "clean"); } catch (error) { seen.push(error.code); }
    }
    ${summaryOf('seen.join(" ")')}`,
  "spawns a child": `const child = spawn("sleep", ["3"], { detached: true, stdio: "ignore" }); child.unref();\n${summaryOf('"child " + child.pid')}`,
  "allocates 3 GB of Buffers": `const hoard = []; for (let i = 0; i < 30; i++) hoard.push(Buffer.allocUnsafeSlow(100 * 1024 * 1024));\nreturn undefined;`,
};
const PREAMBLE = 'import { readFileSync, writeSync } from "node:fs"; import { spawn } from "node:child_process";';

const folderOf = (name: string): string => name.replace(/[^a-z0-9]+/gi, "-");

function scenarioPlugin(name: string, body: string): Record<string, string> {
  return hookPlugin({
    preamble: PREAMBLE,
    compact: `if (!JSON.stringify(event.branchEntries[0]).includes(${JSON.stringify(`scenario: ${name}`)})) return undefined;\n${body}`,
  });
}

interface Outcome {
  tried: number;
  survived: number;
  lost: number;
  summaries: string[];
  kinds: string[];
}

async function alive(client: BaseContextClient, sessionId: string, entries: number): Promise<boolean> {
  try {
    return (await client.request(SessionGet, { sessionId })).entryCount === entries;
  } catch {
    return false;
  }
}

for (const isolation of ["worker", "process"] as const) {
  describe(`misbehaving plugins (${isolation} isolation)`, () => {
    const dirs = tempDirs();
    let d: TestDaemon;
    let news: PluginNews;
    let stdoutBytes = "";
    let hangingProject: string;

    beforeAll(async () => {
      const home = dirs.make("bc-adversarial-plugins-");
      for (const [name, body] of Object.entries(SCENARIOS)) writePlugin(pluginsRoot(home), folderOf(name), scenarioPlugin(name, body));
      // Hooks get time enough on a loaded machine; the hanging one is cut short by its project's settings.
      hangingProject = dirs.make("bc-adversarial-hang-");
      mkdirSync(join(hangingProject, ".base-context"));
      writeFileSync(join(hangingProject, ".base-context", "settings.json"), JSON.stringify({ plugins: { hookTimeoutMs: 1_000 } }));
      d = await startDaemon({
        home,
        settings: { ...COMPACT_EVERYTHING, summarizer: { provider: "extractive" }, plugins: { isolation, hookTimeoutMs: 20_000 } },
        env: { OPENAI_API_KEY: SECRET },
      });
      news = watchPlugins(d.client);
      d.process.stdout?.on("data", (chunk: Buffer) => (stdoutBytes += chunk.toString("utf8")));
    });
    afterAll(async () => {
      news?.dispose();
      await d?.close();
      dirs.cleanup();
    });

    /** Compacts `rounds` fresh sessions of the scenario, then checks the daemon answers and each session holds what it acknowledged. */
    async function attack(name: string, rounds = 1, row: string = name): Promise<Outcome> {
      const outcome: Outcome = { tried: 0, survived: 0, lost: 0, summaries: [], kinds: [] };
      const errorsBefore = news.errors.length;
      const { client } = d;
      for (let round = 0; round < rounds; round++) {
        outcome.tried++;
        try {
          const { sessionId: marked } = await markedSession(client, name, name === "hangs" ? hangingProject : "/nonexistent/adversarial");
          const result = await compact(client, marked);
          const stored = await alive(client, marked, 6);
          if (result.status === "committed" && stored) {
            outcome.survived++;
            outcome.summaries.push(result.compaction!.summary);
          } else if (!stored) outcome.lost++;
        } catch {
          outcome.lost++;
        }
      }
      if (d.process.exitCode !== null || d.process.signalCode !== null) outcome.lost = outcome.tried;
      outcome.kinds = news.errors
        .slice(errorsBefore)
        .filter((error) => error.pluginId === `global:${folderOf(name)}`)
        .map((error) => error.kind);
      recordScore({ area: `plugins (${isolation})`, scenario: row, tried: outcome.tried, survived: outcome.survived, lost: outcome.lost });
      return outcome;
    }

    it.each([
      ["throws", "exception"],
      ["hangs", "timeout"],
    ])("a plugin that %s is reported (%s), the default summary is stored", async (name, kind) => {
      const outcome = await attack(name);
      expect(outcome).toMatchObject({ tried: 1, survived: 1, lost: 0 });
      expect(outcome.kinds).toContain(kind);
    });

    it("a plugin returning 64 MB, on that compaction and the next, is refused as too-large", async () => {
      const outcome = await attack("returns 64 MB", 2);
      expect(outcome).toMatchObject({ tried: 2, survived: 2, lost: 0 });
      // Node 24's plugin process runs out of its heap while it encodes the 64 MB answer, before the
      // daemon could refuse it: reported as the plugin's out-of-memory failure instead.
      const kind = isolation === "process" && DAEMON_NODE_MAJOR >= 24 ? "oom" : "too-large";
      expect(outcome.kinds).toEqual([kind, kind]);
    });

    it("a plugin writing a forged frame to fd 1 never reaches the client", async () => {
      const outcome = await attack("writes to fd 1");
      expect(outcome).toMatchObject({ tried: 1, survived: 1, lost: 0 });
      expect(outcome.summaries[0]).toMatch(/^pid \d+/);
      expect(stdoutBytes).not.toContain("forged/notification");
    });

    it("process.kill(process.pid) ends no more than the plugin", async () => {
      const outcome = await attack("process.kill(process.pid)");
      expect(outcome).toMatchObject({ tried: 1, survived: 1, lost: 0 });
      // A worker may not signal the daemon; a plugin process may end itself, which is its crash.
      expect(outcome.kinds).toEqual([isolation === "worker" ? "exception" : "crash"]);
    });

    it(`reading /proc/*/environ ${isolation === "process" ? "is denied and the key is in no environment" : "leaves the daemon running (the key is visible in this mode)"}`, async () => {
      const outcome = await attack("reads /proc environ");
      expect(outcome).toMatchObject({ tried: 1, survived: 1, lost: 0 });
      if (isolation === "process") expect(outcome.summaries[0]).toMatch(/^ERR_ACCESS_DENIED ERR_ACCESS_DENIED ERR_ACCESS_DENIED/);
      else expect(outcome.summaries[0]).toMatch(/^KEY /);
    });

    it(`spawning a child ${isolation === "process" ? "is denied" : "is not prevented, the daemon runs on"}`, async () => {
      const outcome = await attack("spawns a child");
      expect(outcome).toMatchObject({ tried: 1, survived: 1, lost: 0 });
      if (isolation === "process") expect(outcome.kinds).toEqual(["exception"]);
      else expect(outcome.summaries[0]).toMatch(/^child \d+/);
    });

    it(`3 GB of Buffers ${isolation === "process" ? "is an out-of-memory failure, not a timeout" : "leaves the daemon running"}`, async () => {
      const outcome = await attack("allocates 3 GB of Buffers");
      expect(outcome).toMatchObject({ tried: 1, survived: 1, lost: 0 });
      // Node 24 refuses the allocation with a RangeError the plugin does not catch (an exception);
      // older releases let the process run out of memory.
      if (isolation === "process") expect(outcome.kinds).toEqual([DAEMON_NODE_MAJOR >= 24 ? "exception" : "oom"]);
    });

    if (isolation === "process") {
      it("plugin processes end with the daemon", async () => {
        const outcome = await attack("writes to fd 1", 1, "runs on, then the daemon is SIGKILLed");
        const pid = Number(/^pid (\d+)/.exec(outcome.summaries[0] ?? "")?.[1]);
        expect(pid).toBeGreaterThan(0);
        d.process.kill("SIGKILL");
        await waitFor(
          () => {
            try {
              process.kill(pid, 0);
              return false;
            } catch {
              return true;
            }
          },
          { timeoutMs: 5_000, message: "the plugin process to exit after the daemon was killed" },
        );
      });
    }
  });
}

/** A session the scenario's plugin acts on: the usual compactable session, its first message naming the scenario. */
async function markedSession(client: BaseContextClient, name: string, cwd: string): Promise<{ sessionId: string }> {
  const { session } = await client.request(SessionCreate, { cwd });
  await appendAll(client, session.id, [
    user(`scenario: ${name}`),
    assistant("Reading the config module first.", { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "src/config.ts" } }] }),
    toolResult("call_1", "read", "export function parseConfig() {}"),
    assistant("Renamed it in src/config.ts and updated 3 call sites."),
    user("Now run the tests."),
  ]);
  return { sessionId: session.id };
}
