// Starting and stopping the real daemon (`base-context serve`) for benches, with its database in a
// throwaway BASE_CONTEXT_HOME.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { daemonBin, protocolModule, requireFromDaemon } from "./dist.mjs";
import { memoryOf, since } from "./stats.mjs";

const protocol = await protocolModule();

/** A fresh BASE_CONTEXT_HOME; `remove()` deletes it. */
export function temporaryHome(label) {
  const path = mkdtempSync(join(tmpdir(), `base-context-bench-${label}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * Spawns the daemon and completes `initialize`. `initializeMs` is the time from spawn to the
 * initialize reply (cold start). `env` adds to the environment (e.g. BASE_CONTEXT_STORE_URL).
 */
export async function startDaemon(home, env = {}) {
  const started = performance.now();
  const daemon = protocol.spawnDaemon({
    command: process.execPath,
    args: [daemonBin, "serve"],
    env: { ...process.env, BASE_CONTEXT_HOME: home, ...env },
    stderr: process.env.BENCH_DAEMON_LOG ? "inherit" : "ignore",
  });
  const failed = daemon.exited.then((code) => {
    throw new Error(`the daemon exited with code ${code} during the bench`);
  });
  failed.catch(() => undefined);
  await Promise.race([daemon.client.initialize({ clientInfo: { name: "bench" } }), failed]);
  const initializeMs = performance.now() - started;
  return {
    client: daemon.client,
    pid: daemon.process.pid,
    initializeMs,
    /** Peak and current RSS of the daemon process (MB). */
    memory: () => memoryOf(daemon.process.pid),
    request: (declaration, params) => Promise.race([daemon.client.request(declaration, params), failed]),
    /** shutdown + exit; closes stdin too, and kills the process if it has not gone after 5 s. */
    async stop() {
      try {
        await withTimeout(daemon.client.shutdown(), 5000);
      } catch {
        // Already gone or stuck: the steps below end it either way.
      }
      daemon.process.stdin.end();
      const exited = await withTimeout(daemon.exited, 5000).catch(() => undefined);
      if (exited === undefined) daemon.process.kill("SIGKILL");
      daemon.client.dispose();
    },
  };
}

/**
 * Waits until no entry in `home`'s database lacks a token count, or `timeoutMs` passes, polling
 * it read-only on a connection of its own. Imports store entries without counts and a running
 * daemon fills them in while it has no request to serve (a bench that measures something else
 * waits for that first, so the two do not share the CPU).
 */
export async function waitForBackfill(home, timeoutMs) {
  const Database = requireFromDaemon("better-sqlite3");
  const db = new Database(join(home, "sessions.db"), { readonly: true, fileMustExist: true });
  try {
    const missing = db.prepare("SELECT count(*) FROM entries WHERE tokens IS NULL").pluck();
    const initial = missing.get();
    const started = performance.now();
    let left = initial;
    while (left > 0 && since(started) < timeoutMs) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      left = missing.get();
    }
    return { entries: initial - left, left, ms: since(started) };
  } finally {
    db.close();
  }
}

/**
 * Starts one `base-context serve --socket` daemon (several clients share it) and waits until it
 * listens. `pid` is the daemon's process id; `connect(name)` opens and initializes a client; `stop()` ends the daemon with SIGTERM.
 */
export async function startSocketDaemon(home, env = {}) {
  const path = join(home, "daemon.sock");
  const child = spawn(process.execPath, [daemonBin, "serve", "--socket", path], {
    env: { ...process.env, BASE_CONTEXT_HOME: home, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  let stderr = "";
  await new Promise((resolve, reject) => {
    child.stderr.setEncoding("utf8").on("data", (text) => {
      stderr += text;
      if (stderr.includes("listening on")) resolve();
    });
    exited.then((code) => reject(new Error(`the socket daemon exited with code ${code} before listening: ${stderr}`)));
  });
  const sockets = [];
  return {
    pid: child.pid,
    /** What the daemon has written to stderr so far (its log). */
    stderr: () => stderr,
    async connect(name) {
      const socket = createConnection(path);
      await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
      sockets.push(socket);
      const client = protocol.connect(socket, socket);
      await client.initialize({ clientInfo: { name } });
      return { client, request: (declaration, params) => client.request(declaration, params) };
    },
    async stop() {
      for (const socket of sockets) socket.destroy();
      child.kill("SIGTERM");
      if ((await withTimeout(exited, 5000).catch(() => undefined)) === undefined) child.kill("SIGKILL");
    },
  };
}

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export { protocol };
