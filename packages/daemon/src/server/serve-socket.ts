/**
 * `base-context serve --socket <path>`: one Daemon for every client that connects, until
 * SIGTERM or SIGINT; then the clients are disconnected, the socket removed and the daemon disposed.
 */
import { Daemon } from "../daemon.js";
import { log } from "../log.js";
import { registerHandlers } from "./handlers/index.js";
import { startBackgroundWork, stopBackgroundWork } from "./serve-background.js";
import { CAPABILITIES, logSummarizerSetup, SERVER_INFO } from "./serving.js";
import { listenOnSocket, type SocketServer } from "./socket.js";

/**
 * Serves until SIGTERM or SIGINT; resolves with the exit code. A socket path that cannot be used
 * rejects with a SocketPathError (worded for the user who chose it), after disposing the daemon.
 */
export async function serveSocket(path: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const daemon = new Daemon({ env });
  await logSummarizerSetup(daemon, env);
  let server: SocketServer;
  try {
    server = await listenOnSocket({
      path,
      daemon,
      serverInfo: SERVER_INFO,
      capabilities: { ...CAPABILITIES, sharedDaemon: true },
      registerHandlers,
    });
  } catch (error) {
    await daemon.dispose();
    throw error;
  }

  // Shared by every client, so started with the daemon (hooks arriving early wait for it).
  daemon.plugins.startInBackground();
  // Token counter warm-up and backfill, in the gaps between every client's requests.
  startBackgroundWork(daemon, server.activity);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  log("info", `${signal}: closing ${server.connectionCount()} connection(s) and stopping`);
  stopBackgroundWork(daemon);
  await server.close();
  await daemon.dispose().catch((error: unknown) => log("error", `shutdown: ${String(error)}`));
  return 0;
}
