/** `base-context label <session> <entry> [text] [--clear]`: labels an entry without moving the leaf. */
import { flag, JSON_OPTION, UsageError, type CommandSpec } from "./args.js";
import { withDaemon } from "./open-daemon.js";
import { processIo, writeJson, type CliIo } from "./output.js";
import { runCommand } from "./run.js";
import { resolveEntryId, resolveSessionId } from "./session-ref.js";

export const LABEL_SPEC: CommandSpec = {
  name: "label",
  summary: "label an entry (a bookmark in the tree) without moving the session, or clear its label",
  description: "Appends a label entry, as /label does in pi; the session stays where it is.",
  arguments: [
    { name: "session", description: "session id (or a unique start of it, at least 4 characters)" },
    { name: "entry", description: "the entry to label (or a unique start of its id; see: base-context tree <session>)" },
    { name: "text", description: "the label", optional: true },
  ],
  options: [{ name: "clear", description: "remove the entry's label" }, JSON_OPTION],
  examples: ['base-context label 5b0c 3f2a91c0 "before the refactor"', "base-context label 5b0c 3f2a91c0 --clear"],
};

export function labelCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(LABEL_SPEC, argv, io, async (args) => {
    const [sessionRef, entryRef, text] = args.arguments as [string, string, string | undefined];
    const clear = flag(args, "clear");
    if (clear && text !== undefined) throw new UsageError("give a label or --clear, not both");
    if (!clear && (text === undefined || text.trim().length === 0)) throw new UsageError("missing <text> (or --clear to remove the label)");
    const result = await withDaemon(io, async (daemon) => {
      const sessionId = await resolveSessionId(daemon, sessionRef);
      const { nodes = [] } = await daemon.sessions.tree({ sessionId, flat: true });
      const targetId = resolveEntryId(nodes, entryRef, sessionId);
      const { entry } = await daemon.sessions.setLabel({ sessionId, targetId, label: clear ? null : text!.trim() });
      return { sessionId, targetId, entry };
    });
    if (flag(args, "json")) writeJson(io, result);
    else io.stdout.write(clear ? `Cleared the label of ${result.targetId}.\n` : `Labelled ${result.targetId} "${text!.trim()}".\n`);
  });
}
