/**
 * `base-context tree <session> [filters] [--width n] [--print] [--json]`: the session tree.
 * On a terminal it opens the interactive picker (tree-picker.ts); piped, or with --print, it
 * prints the tree, every line cut to the width.
 */
import { filterTree, renderTree, replacedCounts, TREE_FILTERS, type TreeFilter } from "../tree/view/index.js";
import { choiceOption, flag, integerOption, JSON_OPTION, stringOption, UsageError, type CommandSpec, type ParsedArgs } from "./args.js";
import { withDaemon } from "./open-daemon.js";
import { colorEnabled, plural, processIo, styleFor, writeJson, type CliIo } from "./output.js";
import { runCommand } from "./run.js";
import { resolveEntryId, resolveSessionId } from "./session-ref.js";

export const TREE_SPEC: CommandSpec = {
  name: "tree",
  summary: "draw a session's tree; on a terminal, pick an entry to go to",
  description:
    "One line per entry with the start of what it says, cut to the terminal width. Box lines\n" +
    "show where the conversation branched; the current leaf, labels, compactions and branch\n" +
    "summaries (with what they are about and how many entries they replaced) are marked. Long\n" +
    "linear stretches are folded (… N more entries …) unless --all is given.\n\n" +
    "On a terminal the tree opens as a picker: ↑/↓ move, ←/→ fold and unfold, f changes the\n" +
    "filter, Enter goes to the entry (asking whether to summarize the branch you leave), q quits.\n" +
    "Piped, or with --print, the tree is printed instead.",
  arguments: [{ name: "session", description: "session id (or a unique start of it, at least 4 characters)" }],
  options: [
    {
      name: "filter",
      value: "kind",
      description: `only some entries: ${TREE_FILTERS.join(", ")} (compactions, branch summaries and prunes); the current leaf always shows`,
    },
    { name: "around", value: "entry", description: "only the entries near this one (or a unique start of its id)" },
    { name: "context", value: "n", description: "with --around: how many steps up and down to show (default 5)" },
    { name: "depth", value: "n", description: "show branches at most n branch points deep; deeper ones are counted in one line" },
    { name: "all", description: "show every entry: fold no linear stretch" },
    { name: "width", value: "n", description: "cut lines to n columns (default: the terminal's, else $COLUMNS, else 120)" },
    { name: "print", description: "print the tree even on a terminal (no picker)" },
    { ...JSON_OPTION, description: "print { session, leafId, nodes } as JSON (nodes flat, parents before children; filters apply)" },
  ],
  examples: [
    "base-context tree 5b0c",
    "base-context tree 5b0c --filter user",
    "base-context tree 5b0c --around 3f2a91c0 --context 3",
    "base-context tree 5b0c --all --json > tree.json",
  ],
};

/** Width of printed lines when stdout is not a terminal and $COLUMNS is not set. */
export const DEFAULT_PRINT_WIDTH = 120;
const DEFAULT_CONTEXT = 5;

export function treeCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(TREE_SPEC, argv, io, async (args) => {
    const filter = choiceOption(args, "filter", TREE_FILTERS);
    const aroundRef = stringOption(args, "around");
    const context = integerOption(args, "context", { min: 0, max: 1_000_000 });
    if (context !== undefined && aroundRef === undefined) throw new UsageError("--context goes with --around");
    const depth = integerOption(args, "depth", { min: 0, max: 1_000_000 });
    const width = treeWidth(args, io);

    if (!flag(args, "json") && !flag(args, "print") && isInteractive(io)) {
      const { pickInTree } = await import("./tree-picker.js");
      return pickInTree(io, { sessionRef: args.arguments[0]!, filter, around: aroundRef, context, depth });
    }

    const shown = await withDaemon(io, async (daemon) => {
      const sessionId = await resolveSessionId(daemon, args.arguments[0]!);
      const { session } = await daemon.sessions.get({ sessionId });
      // Flat: a deep session cannot be sent nested (sessions/tree.ts), and the renderer wants flat nodes.
      const { nodes = [], leafId } = await daemon.sessions.tree({ sessionId, flat: true });
      return { session, leafId, nodes };
    });
    const around =
      aroundRef !== undefined
        ? { id: resolveEntryId(shown.nodes, aroundRef, shown.session.id), context: context ?? DEFAULT_CONTEXT }
        : undefined;
    const nodes = filter !== undefined || around !== undefined ? filterTree(shown.nodes, { filter, around }) : shown.nodes;
    if (flag(args, "json")) {
      writeJson(io, { ...shown, nodes });
      return;
    }
    const { session } = shown;
    const style = styleFor(io.stdout, io.env);
    const name = session.name === undefined ? "" : ` ${style.bold(`"${session.name}"`)}`;
    const count =
      nodes.length === shown.nodes.length ? plural(nodes.length, "entry", "entries") : `${formatShown(nodes.length, shown.nodes.length)}`;
    const { cutVisible, visibleLength } = await import("../tree/view/index.js");
    io.stdout.write(`${treeHeader({ id: session.id, name, cwd: session.cwd, count }, width, { cutVisible, visibleLength })}\n`);
    io.stdout.write(
      renderTree(nodes, {
        all: flag(args, "all") || around !== undefined,
        color: colorEnabled(io.stdout, io.env),
        width,
        replaced: replacedCounts(shown.nodes),
        ...(depth !== undefined ? { maxBranchDepth: depth } : {}),
      }),
    );
  });
}

/**
 * `session <id> "name" · <cwd> · 12 entries shown of 495`, within `width`: what gives way is the
 * folder, then the name, never the counts (a number cut short says something false); when even
 * the id and the counts do not fit on one line, the counts go on a line of their own.
 */
function treeHeader(
  parts: { id: string; name: string; cwd: string; count: string },
  width: number,
  text: { cutVisible(line: string, width: number): string; visibleLength(text: string): number },
): string {
  const line = (name: string, cwd: string) => `session ${parts.id}${name}${cwd.length > 0 ? ` · ${cwd}` : ""} · ${parts.count}`;
  const whole = line(parts.name, parts.cwd);
  if (text.visibleLength(whole) <= width) return whole;
  const bare = text.visibleLength(line(parts.name, ""));
  // The folder, shortened from its start (its end says the most): "…/src/app".
  const room = width - bare - 3;
  if (room >= 8) return line(parts.name, `…${parts.cwd.slice(parts.cwd.length - room + 1)}`);
  if (text.visibleLength(line("", "")) <= width) return line("", "");
  return `${text.cutVisible(`session ${parts.id}`, width)}\n${text.cutVisible(parts.count, width)}`;
}

function formatShown(shown: number, total: number): string {
  return `${plural(shown, "entry", "entries")} shown of ${total}`;
}

/** The picker needs a terminal on both sides: keys in, screen out. */
function isInteractive(io: CliIo): boolean {
  return io.stdout.isTTY === true && io.stdin?.isTTY === true && io.env.TERM !== "dumb";
}

/** --width, else the terminal's, else $COLUMNS, else DEFAULT_PRINT_WIDTH: lines always fit something. */
export function treeWidth(args: ParsedArgs, io: CliIo): number {
  const given = integerOption(args, "width", { min: 20, max: 100_000 });
  if (given !== undefined) return given;
  if (io.stdout.isTTY === true && io.stdout.columns) return io.stdout.columns;
  const columns = Number(io.env.COLUMNS);
  return Number.isSafeInteger(columns) && columns >= 20 ? columns : DEFAULT_PRINT_WIDTH;
}

export type { TreeFilter };
