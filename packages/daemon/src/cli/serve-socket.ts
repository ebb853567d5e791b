/**
 * `base-context serve --socket <path>`: one Daemon for every client that connects, until
 * SIGTERM or SIGINT; then the clients are disconnected, the socket removed and the daemon disposed.
 */
import { Daemon } from "../daemon.js";
import { log } from "../log.js";
import { registerHandlers } from "../server/handlers/index.js";
import { listenOnSocket, SocketPathError, type SocketServer } from "../server/socket.js";
import type { CliIo } from "./output.js";
import { CliError } from "./run.js";
import { CAPABILITIES, logSummarizerSetup, SERVER_INFO } from "./serve.js";
import { startBackgroundWork, stopBackgroundWork } from "./serve-background.js";

export async function serveSocket(path: string, io: CliIo): Promise<number> {
  const daemon = new Daemon({ env: io.env });
  await logSummarizerSetup(daemon, io.env);
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
    if (error instanceof SocketPathError) throw new CliError(error.message);
    throw error;
  }

  // Shared by every client, so started with the daemon (hooks arriving early wait for it).
  daemon.plugins.startInBackground();
  // Token counter warm-up and backfill, in the gaps between every client's requests.
  startBackgroundWork(daemon);
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
