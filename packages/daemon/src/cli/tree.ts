/** `base-context tree <session> [--json] [--all]`: the session tree in the terminal. */
import { renderTree } from "../tree/view/index.js";
import { EXIT, parseCommandArgs, processIo, wantsColor, withDaemon, type CliIo } from "./tree-cli-support.js";

export const TREE_USAGE = `Usage: base-context tree <session> [--json] [--all]

Draws the session's tree: one line per entry, the current leaf, labels, compactions and branch
summaries marked. Long linear stretches are folded unless --all is given.

Options:
  --all     show every entry (no folding)
  --json    print { session, leafId, nodes } as JSON (nodes flat, parents before children)
  -h, --help
`;

/** Lines are cut to the terminal's width; piped output gets this many columns. */
const PIPED_WIDTH = 120;

export async function treeCommand(args: string[], io: CliIo = processIo()): Promise<number> {
  const parsed = parseCommandArgs(
    "tree",
    TREE_USAGE,
    {
      args,
      allowPositionals: true,
      options: { json: { type: "boolean" }, all: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    },
    io,
  );
  if (typeof parsed === "number") return parsed;
  if (parsed.values.help) {
    io.stdout.write(TREE_USAGE);
    return EXIT.ok;
  }
  const [sessionId, ...extra] = parsed.positionals;
  if (sessionId === undefined || extra.length > 0) {
    io.stderr.write(`base-context tree: ${sessionId === undefined ? "which session? give its id" : `unexpected argument "${extra[0]}"`}\n\n${TREE_USAGE}`);
    return EXIT.usage;
  }

  return withDaemon("tree", io, async (daemon) => {
    const { session } = await daemon.sessions.get({ sessionId });
    // Flat: a deep session cannot be nested (see sessions/tree.ts), and the renderer wants flat nodes.
    const { nodes = [], leafId } = await daemon.sessions.tree({ sessionId, flat: true });
    if (parsed.values.json) {
      io.stdout.write(`${JSON.stringify({ session, leafId, nodes }, null, 2)}\n`);
      return EXIT.ok;
    }
    const name = session.name === undefined ? "" : ` "${session.name}"`;
    io.stdout.write(`session ${session.id}${name} · ${session.cwd} · ${nodes.length} ${nodes.length === 1 ? "entry" : "entries"}\n`);
    io.stdout.write(
      renderTree(nodes, {
        all: parsed.values.all === true,
        color: wantsColor(io),
        width: io.stdout.isTTY === true ? (io.stdout.columns ?? PIPED_WIDTH) : PIPED_WIDTH,
      }),
    );
    return EXIT.ok;
  });
}
