/** `base-context serve`: the daemon over stdio (stdout carries protocol bytes only). */
import { Daemon } from "../daemon.js";
import { log } from "../log.js";
import { registerHandlers } from "../server/handlers/index.js";
import { Router } from "../server/router.js";
import { startServer } from "../server/server.js";
import { VERSION } from "../version.js";

export async function serve(): Promise<number> {
  const daemon = new Daemon();
  const router = new Router();
  return new Promise<number>((resolve) => {
    const server = startServer({
      input: process.stdin,
      output: process.stdout,
      router,
      serverInfo: { name: "base-context", version: VERSION },
      capabilities: { contextFormats: ["native", "openai-chat"], importFormats: ["pi-jsonl"] },
      onInitialize: ({ projectDir }) => daemon.setProjectDir(projectDir),
      onExit: (code) => {
        void daemon
          .dispose()
          .catch((error: unknown) => log("error", `shutdown: ${String(error)}`))
          .finally(() => {
            resolve(code);
            // stdin is still open when the client sent `exit` and would keep the process alive:
            // leave once everything written to stdout has been handed to the OS.
            process.stdout.write("", () => process.exit(code));
          });
      },
    });
    registerHandlers(router, daemon, server.peer);
  });
}
