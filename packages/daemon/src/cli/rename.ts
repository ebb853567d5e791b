/** `base-context rename <session> <name>`: names a session (a session_info entry, as pi does). */
import { flag, JSON_OPTION, UsageError, type CommandSpec } from "./args.js";
import { withDaemon } from "./open-daemon.js";
import { processIo, writeJson, type CliIo } from "./output.js";
import { runCommand } from "./run.js";
import { resolveSessionId } from "./session-ref.js";

export const RENAME_SPEC: CommandSpec = {
  name: "rename",
  summary: "name a session (shown by sessions, tree and show; kept on export)",
  description: "Appends a session_info entry, which is how pi names a session, so the name travels with an export.",
  arguments: [
    { name: "session", description: "session id (or a unique start of it, at least 4 characters)" },
    { name: "name", description: "the new name" },
  ],
  options: [JSON_OPTION],
  examples: ['base-context rename 5b0c "JWT migration"'],
};

export function renameCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(RENAME_SPEC, argv, io, async (args) => {
    const name = args.arguments[1]!.trim();
    if (name.length === 0) throw new UsageError("the name must not be empty");
    const result = await withDaemon(io, async (daemon) =>
      daemon.sessions.rename({ sessionId: await resolveSessionId(daemon, args.arguments[0]!), name }),
    );
    if (flag(args, "json")) writeJson(io, result);
    else io.stdout.write(`Session ${result.session.id} is now "${result.session.name ?? name}".\n`);
  });
}
