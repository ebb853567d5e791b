/**
 * `serve --socket <path>`: one long-lived daemon shared by several clients (editor windows,
 * agents) over a Unix socket. Each connection gets its own JSON-RPC connection and lifecycle
 * (initialize → … → shutdown → exit ends that connection, not the daemon) over the same Daemon;
 * the ConnectionHub carries session news between them.
 *
 * The socket is created owner-only (0600): whoever can connect can read every session. A path
 * that exists is only replaced when it is a stale socket (nobody accepts connections on it).
 */
import { accessSync, chmodSync, constants as fsConstants, statSync, unlinkSync, type BigIntStats } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { dirname, resolve } from "node:path";
import type { Daemon } from "../daemon.js";
import { log } from "../log.js";
import { lstatSpecialFile } from "../special-file-stat.js";
import { ConnectionHub } from "./connection-hub.js";
import type { Peer, RequestActivity, Router } from "./router.js";
import { startServer, type ServerInfo } from "./server.js";

export interface SocketServerOptions {
  path: string;
  daemon: Daemon;
  serverInfo: ServerInfo;
  capabilities: Record<string, unknown>;
  /**
   * Registers one connection's handlers. What it returns is disposed when that connection ends:
   * the place to undo per-connection subscriptions (e.g. forwarding daemon events to `peer`).
   */
  registerHandlers(router: Router, daemon: Daemon, peer: Peer): void | { dispose(): void };
  /** Where every connection's requests are counted; the server's own when not given. */
  activity?: RequestActivity;
}

export interface SocketServer {
  readonly path: string;
  /** Requests in flight across every connection (background work waits for a gap). */
  readonly activity: RequestActivity;
  /** Connections currently open. */
  connectionCount(): number;
  /** Stops accepting, closes every connection and removes the socket file. The daemon is the caller's. */
  close(): Promise<void>;
}

/** A problem with the socket path, worded for the person who chose it. */
export class SocketPathError extends Error {
  override readonly name = "SocketPathError";
}

/** sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included. */
const MAX_SOCKET_PATH_BYTES = 103;
/** How long a client that sent `exit` may keep its end open before the daemon drops it. */
const CLOSE_GRACE_MS = 1000;

export async function listenOnSocket(options: SocketServerOptions): Promise<SocketServer> {
  const path = resolve(options.path);
  await prepareSocketPath(path);
  const hub = new ConnectionHub({ sessions: options.daemon.sessions, ...(options.activity ? { activity: options.activity } : {}) });
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    acceptConnection(socket, hub, options);
  });

  await listenOwnerOnly(server, path);
  // Never a plain lstatSync of the socket: see special-file-stat.ts (it broke loading chokidar).
  const { ino } = lstatSpecialFile(path);
  log("info", `listening on ${path}`);

  let closing: Promise<void> | undefined;
  return {
    path,
    activity: hub.activity,
    connectionCount: () => hub.size,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((done) => server.close(() => done()));
        for (const socket of sockets) socket.destroy();
        await closed;
        hub.dispose();
        removeOwnSocket(path, ino);
      })()),
  };
}

function acceptConnection(socket: Socket, hub: ConnectionHub, options: SocketServerOptions): void {
  // A client that vanishes (ECONNRESET, EPIPE) ends its connection only; the daemon carries on.
  socket.on("error", (error) => log("debug", `socket client: ${error.message}`));
  const connection = hub.add();
  const router = hub.routerFor(connection);
  const running = startServer({
    input: socket,
    output: socket,
    router,
    serverInfo: options.serverInfo,
    capabilities: options.capabilities,
    maxMessageBytes: () => options.daemon.settings.get().settings.limits.maxMessageBytes,
    maxQueuedOutputBytes: () => options.daemon.settings.get().settings.limits.maxQueuedOutputBytes,
    maxSummaryBytes: () => options.daemon.settings.get().settings.limits.maxSummaryBytes,
    peerName: `socket client ${connection.id}`,
    connectionId: connection.id,
    onExit: (code) => {
      hub.remove(connection);
      registration?.dispose();
      log("debug", `socket client ${connection.id} left (${code === 0 ? "after shutdown" : "without shutdown"})`);
      running.connection.dispose();
      // Read nothing more: after an unreadable frame the client may still be sending (a 2^40-byte
      // body), and every chunk read would be memory allocated only to be dropped.
      socket.pause();
      socket.end();
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    },
  });
  // Before the first message can arrive: startServer only starts reading on the next tick.
  connection.peer = running.peer;
  const registration = options.registerHandlers(router, options.daemon, running.peer) ?? undefined;
}

// ---- the socket file ---------------------------------------------------------------------------

/**
 * Checks the path before listening, so each problem gets a message that says what to do: too
 * long, directory missing or not writable, a file that is not a socket, a live daemon already
 * there. A stale socket (left by a daemon that died) is removed.
 */
async function prepareSocketPath(path: string): Promise<void> {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new SocketPathError(`socket path is too long (${bytes} bytes, at most ${MAX_SOCKET_PATH_BYTES}): ${path}; choose a shorter path`);
  }
  const directory = dirname(path);
  try {
    if (!statSync(directory).isDirectory()) throw new SocketPathError(`cannot create the socket: ${directory} is not a directory`);
    accessSync(directory, fsConstants.W_OK | fsConstants.X_OK);
  } catch (error) {
    if (error instanceof SocketPathError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new SocketPathError(`cannot create the socket: directory ${directory} does not exist; create it first`);
    throw new SocketPathError(
      `cannot create the socket in ${directory}: the directory is not writable (${code ?? "error"}); choose a directory you own`,
    );
  }

  let existing: BigIntStats;
  try {
    existing = lstatSpecialFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (!existing.isSocket()) {
    throw new SocketPathError(`${path} exists and is not a socket; refusing to replace it (remove it or choose another path)`);
  }
  if (await isAccepting(path)) {
    throw new SocketPathError(`another daemon is already listening on ${path}; connect to it, or stop it first`);
  }
  unlinkSync(path);
  log("info", `removed a stale socket at ${path}`);
}

function isAccepting(path: string): Promise<boolean> {
  return new Promise((done) => {
    const probe = createConnection(path);
    probe.once("connect", () => {
      probe.destroy();
      done(true);
    });
    // ECONNREFUSED: a socket file nobody listens on.
    probe.once("error", () => done(false));
  });
}

/**
 * Listens with the socket created 0600 from the start (umask), not chmod-ed afterwards: in
 * between, anyone could connect. chmod once more in case the platform ignored the umask.
 */
async function listenOwnerOnly(server: Server, path: string): Promise<void> {
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(path, () => {
        server.off("error", fail);
        done();
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new SocketPathError(`another daemon is already listening on ${path}`);
    if (code === "EACCES") throw new SocketPathError(`cannot create the socket ${path}: permission denied; choose a directory you own`);
    throw error;
  } finally {
    process.umask(previous);
  }
  chmodSync(path, 0o600);
}

/** Removes the socket file, unless someone else's socket has replaced it meanwhile. */
function removeOwnSocket(path: string, ino: bigint): void {
  try {
    if (lstatSpecialFile(path).ino === ino) unlinkSync(path);
  } catch {
    // Already gone (net.Server removes it on close on most platforms).
  }
}
