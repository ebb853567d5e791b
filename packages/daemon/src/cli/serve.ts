/**
 * `base-context serve`: the command's arguments. The serving itself is server/'s: over stdio
 * (server/serve-stdio.ts), or with `--socket <path>` one daemon shared by several clients over a
 * Unix socket (server/serve-socket.ts).
 */
import { stringOption, type CommandSpec } from "./args.js";
import { CliError } from "./cli-error.js";
import { processIo, type CliIo } from "./output.js";
import { runCommand } from "./run.js";

export const SERVE_SPEC: CommandSpec = {
  name: "serve",
  summary: "run the daemon: JSON-RPC with LSP framing over stdio, or over a Unix socket",
  description:
    "Over stdio (the default) the client that started the daemon is its only client, and the daemon\n" +
    "exits when that client sends exit or closes stdin, or on SIGTERM; a Ctrl-C meant for the client\n" +
    "(SIGINT while stdin is not a terminal) is ignored. With --socket, every connection is a client with\n" +
    "its own initialize/shutdown/exit; the daemon runs until SIGTERM or SIGINT. The socket is created\n" +
    "readable by its owner only (0600). Logs go to stderr (BASE_CONTEXT_LOG=error|warn|info|debug).",
  options: [{ name: "socket", value: "path", description: "listen on this Unix socket instead of stdio" }],
  examples: ["base-context serve", "base-context serve --socket ~/.base-context/daemon.sock"],
};

export function serveCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(SERVE_SPEC, argv, io, async (args) => {
    const socketPath = stringOption(args, "socket");
    if (socketPath === undefined) return (await import("../server/serve-stdio.js")).serveStdio();
    const { serveSocket } = await import("../server/serve-socket.js");
    const { SocketPathError } = await import("../server/socket.js");
    try {
      return await serveSocket(socketPath, io.env);
    } catch (error) {
      // A path the user chose and can fix: said as a command's failure, with no stack.
      if (error instanceof SocketPathError) throw new CliError(error.message);
      throw error;
    }
  });
}
