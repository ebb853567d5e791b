/** `base-context delete <session> [--yes]`: removes a session and everything in it. */
import { createInterface } from "node:readline/promises";
import { flag, JSON_OPTION, type CommandSpec } from "./args.js";
import { withDaemon } from "./open-daemon.js";
import { plural, processIo, writeJson, type CliIo } from "./output.js";
import { CliError, EXIT, runCommand } from "./run.js";
import { resolveSessionId } from "./session-ref.js";

export const DELETE_SPEC: CommandSpec = {
  name: "delete",
  summary: "delete a session with all its entries (asks first; --yes in scripts)",
  description: "There is no undo: export the session first to keep a copy (base-context export <session> -o file.jsonl).",
  arguments: [{ name: "session", description: "session id (or a unique start of it, at least 4 characters)" }],
  options: [{ name: "yes", short: "y", description: "do not ask (needed when not on a terminal)" }, JSON_OPTION],
  examples: ["base-context delete 5b0c", "base-context delete 5b0c --yes"],
  exitStatus: "Exit status: 0 deleted, 1 failure or not confirmed, 2 usage error.",
};

export function deleteCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(DELETE_SPEC, argv, io, async (args) => {
    return withDaemon(io, async (daemon) => {
      const sessionId = await resolveSessionId(daemon, args.arguments[0]!);
      const { session, entryCount } = await daemon.sessions.get({ sessionId });
      const what = `session ${sessionId}${session.name !== undefined ? ` "${session.name}"` : ""} (${plural(entryCount, "entry", "entries")})`;
      if (!flag(args, "yes")) {
        if (io.stdin?.isTTY !== true || io.stdout.isTTY !== true) {
          throw new CliError(`not deleting ${what} without confirmation`, [
            `Add --yes to delete it: base-context delete ${sessionId} --yes`,
          ]);
        }
        const prompt = createInterface({ input: io.stdin, output: io.stdout as NodeJS.WriteStream });
        const answer = await prompt.question(`Delete ${what}? There is no undo. [y/N] `).finally(() => prompt.close());
        if (!/^y(es)?$/i.test(answer.trim())) {
          io.stdout.write("Not deleted.\n");
          return EXIT.failure;
        }
      }
      await daemon.sessions.delete({ sessionId });
      if (flag(args, "json")) writeJson(io, { deleted: sessionId, entryCount });
      else io.stdout.write(`Deleted ${what}.\n`);
      return EXIT.ok;
    });
  });
}
