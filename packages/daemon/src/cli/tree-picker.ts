/**
 * The interactive tree picker (`base-context tree` on a terminal), like /tree in an agent: the
 * tree on the alternate screen, keys to move, fold and filter, Enter to go to an entry, with the
 * question whether to summarize the branch left. Navigating goes through `tree/navigate`, as
 * `base-context navigate` does, and prints the same result.
 */
import { replacedCounts, type TreeFilter } from "../tree/view/index.js";
import { describeResult } from "./navigate.js";
import { withDaemon } from "./open-daemon.js";
import { colorEnabled, type CliIo } from "./output.js";
import { EXIT, interruptible } from "./run.js";
import { resolveEntryId, resolveSessionId } from "./session-ref.js";
import { drawScreen, initialState, parseKeys, pressKey, type PickerOutcome, type PickerState } from "./tree-picker-state.js";

export interface PickOptions {
  sessionRef: string;
  filter: TreeFilter | undefined;
  around: string | undefined;
  context: number | undefined;
  depth: number | undefined;
}

const DEFAULT_CONTEXT = 5;

export async function pickInTree(io: CliIo, options: PickOptions): Promise<number> {
  const loaded = await withDaemon(io, async (daemon) => {
    const sessionId = await resolveSessionId(daemon, options.sessionRef);
    const { session } = await daemon.sessions.get({ sessionId });
    const { nodes = [], leafId } = await daemon.sessions.tree({ sessionId, flat: true });
    return { session, nodes, leafId };
  });
  const { session, nodes, leafId } = loaded;
  const around =
    options.around !== undefined
      ? { id: resolveEntryId(nodes, options.around, session.id), context: options.context ?? DEFAULT_CONTEXT }
      : undefined;
  const state = initialState({
    nodes,
    replaced: replacedCounts(nodes),
    leafId,
    title: `session ${session.id}${session.name !== undefined ? ` "${session.name}"` : ""}`,
    filter: options.filter,
    around,
    maxBranchDepth: options.depth,
  });

  const outcome = await runPicker(io, state);
  if (outcome.kind === "quit") return EXIT.ok;

  const result = await interruptible(io, outcome.summarize ? "Summarizing the branch you leave" : "Navigating", (signal) =>
    withDaemon(io, (daemon) =>
      daemon.tree.navigate(
        {
          sessionId: session.id,
          targetId: outcome.targetId,
          summarize: outcome.summarize,
          ...(outcome.instructions !== undefined ? { customInstructions: outcome.instructions } : {}),
        },
        { signal },
      ),
    ),
  );
  io.stdout.write(describeResult(result, outcome.targetId));
  return result.status === "moved" || result.status === "unchanged" ? EXIT.ok : EXIT.failure;
}

/** Runs the picker on the alternate screen until a choice or a quit; the terminal is restored whatever happens. */
function runPicker(io: CliIo, state: PickerState): Promise<PickerOutcome> {
  const stdin = io.stdin!;
  const stdout = io.stdout as NodeJS.WriteStream;
  const color = colorEnabled(stdout, io.env);
  const size = () => ({ width: Math.max(20, stdout.columns || 80), height: Math.max(5, stdout.rows || 24) });
  const draw = () => {
    const { width, height } = size();
    const lines = drawScreen(state, width, height, color);
    stdout.write(`\x1b[H${lines.map((line) => `${line}\x1b[K`).join("\r\n")}\x1b[J`);
  };

  return new Promise((resolve) => {
    const wasRaw = stdin.isRaw;
    const finish = (outcome: PickerOutcome) => {
      stdin.off("data", onData);
      stdout.off("resize", draw);
      stdin.setRawMode(wasRaw);
      stdin.pause();
      stdout.write("\x1b[?25h\x1b[?1049l");
      resolve(outcome);
    };
    const onData = (data: Buffer | string) => {
      for (const key of parseKeys(data.toString())) {
        const outcome = pressKey(state, key, Math.max(1, size().height - 4));
        if (outcome) return finish(outcome);
      }
      draw();
    };
    stdout.write("\x1b[?1049h\x1b[?25l");
    stdin.setRawMode(true);
    stdin.setEncoding("utf8");
    stdin.on("data", onData);
    stdout.on("resize", draw);
    stdin.resume();
    draw();
  });
}
