/** `base-context tree <session> [--all] [--json]`: the session tree in the terminal. */
import { renderTree } from "../tree/view/index.js";
import { flag, JSON_OPTION, type CommandSpec } from "./args.js";
import { withDaemon } from "./open-daemon.js";
import { colorEnabled, lineWidth, plural, processIo, styleFor, writeJson, type CliIo } from "./output.js";
import { runCommand } from "./run.js";
import { resolveSessionId } from "./session-ref.js";

export const TREE_SPEC: CommandSpec = {
  name: "tree",
  summary: "draw a session's tree (branches, labels, compactions, the current leaf)",
  description:
    "One line per entry with the start of what it says. Box lines show where the conversation\n" +
    "branched; the current leaf, labels, compactions and branch summaries are marked. Long\n" +
    "linear stretches are folded (… N more entries …) unless --all is given.",
  arguments: [{ name: "session", description: "session id (or a unique start of it, at least 4 characters)" }],
  options: [{ name: "all", description: "show every entry: fold nothing" }, { ...JSON_OPTION, description: "print { session, leafId, nodes } as JSON (nodes flat, parents before children)" }],
  examples: ["base-context tree 5b0c", "base-context tree 5b0c --all --json > tree.json"],
};

export function treeCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(TREE_SPEC, argv, io, async (args) => {
    const shown = await withDaemon(io, async (daemon) => {
      const sessionId = await resolveSessionId(daemon, args.arguments[0]!);
      const { session } = await daemon.sessions.get({ sessionId });
      // Flat: a deep session cannot be sent nested (sessions/tree.ts), and the renderer wants flat nodes.
      const { nodes = [], leafId } = await daemon.sessions.tree({ sessionId, flat: true });
      return { session, leafId, nodes };
    });
    if (flag(args, "json")) {
      writeJson(io, shown);
      return;
    }
    const { session, nodes } = shown;
    const style = styleFor(io.stdout, io.env);
    const name = session.name === undefined ? "" : ` ${style.bold(`"${session.name}"`)}`;
    io.stdout.write(`session ${session.id}${name} · ${session.cwd} · ${plural(nodes.length, "entry", "entries")}\n`);
    const width = lineWidth(io);
    io.stdout.write(renderTree(nodes, { all: flag(args, "all"), color: colorEnabled(io.stdout, io.env), ...(Number.isFinite(width) ? { width } : {}) }));
  });
}
