import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DaemonStatus, SessionCreate, SessionDidChange, SessionWatch, type BaseContextClient } from "@base-context/protocol";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { DAEMON_BIN } from "../../../../test/support/daemon.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { DaemonConnection, type DaemonConnectionOptions, type DaemonSettings, type DaemonState } from "./daemon-connection.js";
import type { Problem } from "./problems.js";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
const FAST = { firstDelayMs: 20, maxDelayMs: 100, resetAfterMs: 60_000, maxAttempts: 3 };

const connections: DaemonConnection[] = [];
afterEach(async () => {
  for (const connection of connections.splice(0)) await connection.stop();
});

function open(settings: Partial<DaemonSettings>, options: Partial<DaemonConnectionOptions> = {}) {
  const home = dirs.make("bc-vscode-");
  const problems: Problem[] = [];
  const states: DaemonState[] = [];
  const lines: string[] = [];
  const connection = new DaemonConnection({
    settings: () => ({ command: process.execPath, args: [DAEMON_BIN], socket: "", env: { BASE_CONTEXT_HOME: home }, ...settings }),
    clientInfo: { name: "vscode-test", version: "0.0.0" },
    log: (line) => lines.push(line),
    onProblem: (problem) => problems.push(problem),
    onState: (state) => states.push(state),
    backoff: FAST,
    ...options,
  });
  connections.push(connection);
  return { connection, home, problems, states, lines };
}

/** Resolves once a state from index `from` on satisfies `until`; returns its index. */
function stateUntil(states: DaemonState[], until: (state: DaemonState) => boolean, from = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      const index = states.findIndex((state, i) => i >= from && until(state));
      if (index >= 0) resolve(index);
      else if (Date.now() - started > 20_000) reject(new Error(`states so far: ${states.join(", ")}`));
      else setTimeout(check, 20);
    };
    check();
  });
}

describe("DaemonConnection", () => {
  it("starts a daemon over stdio, logs its stderr, and keeps its handlers across a restart after the daemon dies", async () => {
    const readies: BaseContextClient[] = [];
    const news: string[][] = [];
    const { connection, states, lines } = open(
      { env: { BASE_CONTEXT_HOME: dirs.make("bc-vscode-"), BASE_CONTEXT_LOG: "info" } },
      {
        onReady: async (client) => {
          readies.push(client);
          await client.request(SessionWatch, {});
        },
      },
    );
    connection.onNotification(SessionDidChange, (params) => news.push(params.changed.map((session) => session.id)));
    connection.start();
    const first = await connection.ready();
    expect(connection.state).toBe("running");
    expect(states.slice(0, 2)).toEqual(["starting", "running"]);
    const { pid } = await first.request(DaemonStatus, {});

    // The daemon dies: the connection starts another, and the views hear from it as before.
    process.kill(pid, "SIGKILL");
    const restarting = await stateUntil(states, (state) => state === "restarting");
    await stateUntil(states, (state) => state === "running", restarting);
    const second = await connection.ready();
    expect(second).not.toBe(first);
    expect(readies).toHaveLength(2);
    const { session } = await second.request(SessionCreate, { cwd: "/p" });
    await new Promise<void>((resolve) => {
      const poll = () => (news.some((ids) => ids.includes(session.id)) ? resolve() : setTimeout(poll, 50));
      poll();
    });
    expect(lines.some((line) => line.includes("[extension] Base Context: the daemon was killed (SIGKILL)"))).toBe(true);
    expect(lines.some((line) => line.includes("summarizer:"))).toBe(true);
  });

  it("says the command is not found, with the fix, and does not retry", async () => {
    const { connection, problems, states } = open({ command: "base-context-not-installed-here", args: [] });
    connection.start();
    await expect(connection.ready()).rejects.toThrow(/the command `base-context-not-installed-here` was not found/);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.actions).toContain("openSettings");
    expect(states.at(-1)).toBe("stopped");
  });

  it("says when the store cannot be opened, naming the file, instead of serving a daemon that fails every request", async () => {
    const folder = dirs.make("bc-vscode-db-");
    const notAFile = join(folder, "sessions.db");
    mkdirSync(notAFile);
    const { connection, problems } = open({ env: { BASE_CONTEXT_HOME: folder, BASE_CONTEXT_DB: notAFile } });
    connection.start();
    await expect(connection.ready()).rejects.toThrow(/cannot open its session store/);
    expect(problems[0]!.message).toContain(notAFile);
    expect(problems[0]!.message).toContain("BASE_CONTEXT_HOME");
    expect(problems[0]!.retry).toBe(false);
  });

  it("says a command line that is not a daemon's is wrong (usage error), without retrying", async () => {
    const { connection, problems } = open({ args: [DAEMON_BIN, "--no-such-option"] });
    connection.start();
    await expect(connection.ready()).rejects.toThrow(/is not a Base Context daemon/);
    expect(problems).toHaveLength(1);
  });

  it("retries a socket nobody listens on with backoff, then says how to start a shared daemon", async () => {
    const socket = join(dirs.make("bc-vscode-sock-"), "daemon.sock");
    const { connection, problems, states } = open({ socket });
    connection.start();
    await expect(connection.ready()).rejects.toThrow(/no daemon listens on/);
    expect(states.filter((state) => state === "restarting").length).toBeGreaterThanOrEqual(1);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toContain(`base-context serve --socket ${socket}`);
  });
});
