/**
 * `base-context serve` over stdio: one Daemon for the client that started it, the protocol on
 * its own copy of stdout (protocol-output.ts), until the client sends `exit` or closes stdin.
 */
import { Daemon } from "../daemon.js";
import { log } from "../log.js";
import { registerHandlers } from "./handlers/index.js";
import { protocolOutput } from "./protocol-output.js";
import { Router } from "./router.js";
import { STARTUP_QUIET_MS, startBackgroundWork, stopBackgroundWork } from "./serve-background.js";
import { startServer } from "./server.js";
import { CAPABILITIES, logSummarizerSetup, SERVER_INFO } from "./serving.js";

/** Serves until the client ends the connection; resolves with the exit code (the process exits too). */
export async function serveStdio(): Promise<number> {
  const daemon = new Daemon();
  logSummarizerSetup(daemon);
  const router = new Router();
  const output = protocolOutput();
  return new Promise<number>((resolve) => {
    const server = startServer({
      input: process.stdin,
      output,
      router,
      serverInfo: SERVER_INFO,
      capabilities: CAPABILITIES,
      maxMessageBytes: () => daemon.settings.get().settings.limits.maxMessageBytes,
      onInitialize: ({ projectDir }) => {
        // Not awaited: loading plugins must not hold up the reply; a hook arriving early waits for it.
        // Started in the first pause between requests, not in the way of the client's first ones.
        void router.activity.whenIdle(STARTUP_QUIET_MS).then(() => daemon.plugins.startInBackground(projectDir));
        // Token counter warm-up and backfill, in the gaps between requests.
        startBackgroundWork(daemon, router.activity);
      },
      onExit: (code) => {
        stopBackgroundWork(daemon);
        void daemon
          .dispose()
          .catch((error: unknown) => log("error", `shutdown: ${String(error)}`))
          .finally(() => {
            resolve(code);
            // stdin is still open when the client sent `exit` and would keep the process alive:
            // leave once everything written to the client has been handed to the OS.
            output.write("", () => process.exit(code));
          });
      },
    });
    registerHandlers(router, daemon, server.peer);
    handleSignals();
  });
}

/**
 * A daemon over stdio belongs to the client that started it, which ends it with `exit` or by
 * closing stdin. Ctrl-C in the client's terminal reaches the whole process group, the daemon
 * included, while the client may still want to store what the interrupted turn produced: so
 * SIGINT is ignored unless the daemon itself was started from a terminal. SIGTERM (and that
 * SIGINT) end it in order, as a closed stdin does: work in flight is dropped, the store closed.
 */
function handleSignals(): void {
  const stop = (signal: NodeJS.Signals) => {
    log("info", `${signal}: stopping`);
    process.stdin.destroy();
  };
  process.once("SIGTERM", stop);
  process.on("SIGINT", () => {
    if (process.stdin.isTTY) stop("SIGINT");
    else log("debug", "SIGINT ignored: the client that started this daemon ends it (exit, or closing stdin)");
  });
}
