/**
 * One client's network is not the others' (docs/design.md): a socket daemon on PostgreSQL, behind
 * a proxy that delays every packet by 1 ms each way (a server across a network), serves one client
 * appending in a loop and another building its context. An append's commit is awaited on the
 * event loop, so the daemon's thread never waits for the appender's network, and the other
 * client's `context/build` latency rises by less than 10 ms.
 *
 * Checked here by the mechanism: the daemon's debug log says how many round trips each write
 * waited for on the thread, and the appends wait for none. The latency itself is a race with the
 * machine's CPU (beside other test files on two busy cores, what the appender's CPU costs the
 * builds grew past 10 ms while no thread waited on the network at all): bench/postgres.mjs
 * measures it (bench/results/postgres.md), no test times it.
 */
import { connect, ContextBuild, EntryAppend, EntryAppendMany, SessionCreate, type BaseContextClient } from "@base-context/protocol";
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { postgresTarget, startDelayProxy } from "../scripts/lib/delay-proxy.mjs";
import { assistant } from "./fixtures/e2e.js";
import { DAEMON_MAIN } from "./support/daemon.js";
import { onPostgres, storeEnvFor, storeUrlFor } from "./support/engine.js";
import { tempDirs } from "./support/temp-dir.js";
import { TEST_NODE } from "./support/test-node.js";
import { waitFor } from "./support/wait.js";

const dirs = tempDirs();
const running: ChildProcess[] = [];
const sockets: Socket[] = [];
afterAll(() => {
  for (const socket of sockets) socket.destroy();
  for (const child of running) child.kill("SIGKILL");
  dirs.cleanup();
});

/** Builds per round; rounds alternate "alone" and "beside the appender". */
const BUILDS_PER_ROUND = 25;
const ROUNDS = 8;

const userEntry = (text: string) => ({ type: "message" as const, message: { role: "user" as const, content: text } });

/** A socket daemon at debug level (its per-write traffic lines), its store behind `storeUrl`. */
async function startDaemon(home: string, storeUrl: string): Promise<{ path: string; stderr: () => string }> {
  const path = join(home, "daemon.sock");
  const child = spawn(TEST_NODE, [DAEMON_MAIN, "serve", "--socket", path], {
    env: {
      ...process.env,
      BASE_CONTEXT_HOME: home,
      ...storeEnvFor(home),
      BASE_CONTEXT_STORE_URL: storeUrl,
      BASE_CONTEXT_LOG: "debug",
      OPENAI_API_KEY: "",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  running.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  await waitFor(() => stderr.includes("listening on"), { timeoutMs: 20_000, message: "the socket daemon did not start listening" });
  return { path, stderr: () => stderr };
}

async function connectClient(path: string, name: string): Promise<BaseContextClient> {
  const socket = createConnection(path);
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const client = connect(socket, socket);
  await client.initialize({ clientInfo: { name } });
  return client;
}

/** The debug log's traffic lines of writes to `sessionId` (traffic-log.ts): round trips waited on the thread. */
function writesOf(stderr: string, sessionId: string): { awaited: boolean; roundTrips: number }[] {
  const line = new RegExp(`postgres write \\(session ${sessionId}\\)(, commit on the event loop)?: (\\d+) round trips?`, "g");
  return [...stderr.matchAll(line)].map((match) => ({ awaited: match[1] !== undefined, roundTrips: Number(match[2]) }));
}

// On SQLite the store does no network I/O: what an append costs the others is its CPU.
describe.runIf(onPostgres)("serve --socket on PostgreSQL across a network", () => {
  it("one client appending in a loop beside another's context builds: the appends wait for no round trip on the daemon's thread", async () => {
    const home = dirs.make("bc-socket-neighbours-");
    const url = storeUrlFor(home)!;
    const proxy = await startDelayProxy(postgresTarget(url), 1);
    try {
      const daemon = await startDaemon(home, proxy.url(url));
      const appender = await connectClient(daemon.path, "appender");
      const reader = await connectClient(daemon.path, "reader");
      const { session: read } = await reader.request(SessionCreate, { cwd: "/project", name: "read" });
      // Replies of about a megabyte, which leave the daemon in several socket writes.
      const text = (i: number) => `${i} ${"lorem ipsum dolor sit amet ".repeat(80)}`;
      const turns = Array.from({ length: 500 }, (_, i) => (i % 2 === 0 ? userEntry(text(i)) : assistant(text(i))));
      await reader.request(EntryAppendMany, { sessionId: read.id, entries: turns });
      const { session: written } = await appender.request(SessionCreate, { cwd: "/project", name: "written" });

      const builds = async (count: number) => {
        for (let i = 0; i < count; i++) await reader.request(ContextBuild, { sessionId: read.id });
      };
      let appended = 0;
      await builds(10);
      for (let round = 0; round <= ROUNDS; round++) {
        await builds(BUILDS_PER_ROUND);
        let appending = true;
        const loop = (async () => {
          while (appending) {
            await appender.request(EntryAppend, { sessionId: written.id, entry: userEntry(`${"x".repeat(1000)} ${appended++}`) });
          }
        })();
        await builds(BUILDS_PER_ROUND);
        appending = false;
        await loop;
      }
      expect(appended).toBeGreaterThan(50); // the count below means nothing otherwise

      // The mechanism: the appends' commits were awaited on the event loop, and the commit was
      // each one's only round trip (nothing waited for on the thread before it). Two writes of
      // this session block: its creation, and its first append (which reads the session's leaf;
      // later ones know it).
      const writes = writesOf(daemon.stderr(), written.id);
      const awaited = writes.filter((write) => write.awaited);
      expect(writes.length - awaited.length).toBeLessThanOrEqual(2);
      expect(awaited.length).toBeGreaterThanOrEqual(appended - 1);
      expect(awaited.filter((write) => write.roundTrips !== 1)).toEqual([]);
    } finally {
      await proxy.stop();
    }
  }, 120_000);
});
