/**
 * The interactive tree picker's state and drawing, without a terminal: keys in, a new state
 * out; a state and a screen size in, lines out. tree-picker.ts feeds it real keys.
 */
import { cutVisible, filterTree, layoutTree, rowLine, styler, type FlatNode, type TreeFilter, type TreeRow } from "../tree/view/index.js";

/** The filter toggle's cycle; undefined = every entry. */
export const PICKER_FILTERS: readonly (TreeFilter | undefined)[] = [undefined, "user", "labelled", "summaries"];
const FILTER_NAMES: Record<string, string> = {
  all: "all entries",
  user: "user messages",
  labelled: "labelled",
  summaries: "summaries and prunes",
};

export type Key =
  | "up"
  | "down"
  | "left"
  | "right"
  | "pageUp"
  | "pageDown"
  | "home"
  | "end"
  | "enter"
  | "escape"
  | "backspace"
  | "interrupt"
  | { char: string };

export type Mode =
  | { kind: "browse" }
  /** Enter was pressed on `targetId`: summarize the branch left? */
  | { kind: "confirm"; targetId: string }
  /** Typing the summary's instructions. */
  | { kind: "instructions"; targetId: string; text: string };

export interface PickerState {
  readonly nodes: readonly FlatNode[];
  readonly replaced: ReadonlyMap<string, number>;
  readonly leafId: string | null;
  readonly title: string;
  filterIndex: number;
  around: { id: string; context: number } | undefined;
  maxBranchDepth: number | undefined;
  collapsed: Set<string>;
  selectedId: string | undefined;
  /** First row shown. */
  scroll: number;
  mode: Mode;
  /** Rows of the current view (recomputed after each change). */
  rows: TreeRow[];
}

export type PickerOutcome = { kind: "quit" } | { kind: "navigate"; targetId: string; summarize: boolean; instructions?: string };

export function initialState(input: {
  nodes: readonly FlatNode[];
  replaced: ReadonlyMap<string, number>;
  leafId: string | null;
  title: string;
  filter?: TreeFilter | undefined;
  around?: { id: string; context: number } | undefined;
  maxBranchDepth?: number | undefined;
}): PickerState {
  const state: PickerState = {
    nodes: input.nodes,
    replaced: input.replaced,
    leafId: input.leafId,
    title: input.title,
    filterIndex: Math.max(0, PICKER_FILTERS.indexOf(input.filter)),
    around: input.around,
    maxBranchDepth: input.maxBranchDepth,
    collapsed: new Set(),
    selectedId: input.around?.id ?? input.leafId ?? input.nodes[input.nodes.length - 1]?.entry.id,
    scroll: 0,
    mode: { kind: "browse" },
    rows: [],
  };
  relayout(state);
  return state;
}

function relayout(state: PickerState): void {
  const filter = PICKER_FILTERS[state.filterIndex];
  const nodes =
    filter !== undefined || state.around !== undefined ? filterTree(state.nodes, { filter, around: state.around }) : state.nodes;
  state.rows = layoutTree(nodes, {
    all: true,
    collapsed: state.collapsed,
    ...(state.maxBranchDepth !== undefined ? { maxBranchDepth: state.maxBranchDepth } : {}),
  });
  const selectable = nodeRows(state);
  if (!selectable.some((row) => row.node.entry.id === state.selectedId))
    state.selectedId = selectable[selectable.length - 1]?.node.entry.id;
}

function nodeRows(state: PickerState): Extract<TreeRow, { kind: "node" }>[] {
  return state.rows.filter((row): row is Extract<TreeRow, { kind: "node" }> => row.kind === "node");
}

function selectedIndex(state: PickerState): number {
  return state.rows.findIndex((row) => row.kind === "node" && row.node.entry.id === state.selectedId);
}

/** Moves the selection by `delta` selectable rows. */
function move(state: PickerState, delta: number): void {
  const selectable = nodeRows(state);
  if (selectable.length === 0) return;
  const at = selectable.findIndex((row) => row.node.entry.id === state.selectedId);
  const next = Math.min(selectable.length - 1, Math.max(0, (at < 0 ? selectable.length - 1 : at) + delta));
  state.selectedId = selectable[next]!.node.entry.id;
}

/** Applies a key; returns an outcome when the picker is done. */
export function pressKey(state: PickerState, key: Key, pageSize: number): PickerOutcome | undefined {
  const mode = state.mode;
  if (key === "interrupt") return { kind: "quit" };
  if (mode.kind === "confirm") {
    if (key === "escape") state.mode = { kind: "browse" };
    else if (typeof key === "object" && /^[yY]$/.test(key.char)) return { kind: "navigate", targetId: mode.targetId, summarize: true };
    else if ((typeof key === "object" && /^[nN]$/.test(key.char)) || key === "enter")
      return { kind: "navigate", targetId: mode.targetId, summarize: false };
    else if (typeof key === "object" && /^[iI]$/.test(key.char)) state.mode = { kind: "instructions", targetId: mode.targetId, text: "" };
    return undefined;
  }
  if (mode.kind === "instructions") {
    if (key === "escape") state.mode = { kind: "confirm", targetId: mode.targetId };
    else if (key === "enter") {
      const text = mode.text.trim();
      return { kind: "navigate", targetId: mode.targetId, summarize: true, ...(text.length > 0 ? { instructions: text } : {}) };
    } else if (key === "backspace") state.mode = { ...mode, text: Array.from(mode.text).slice(0, -1).join("") };
    else if (typeof key === "object") state.mode = { ...mode, text: mode.text + key.char };
    return undefined;
  }

  if (typeof key === "object") {
    switch (key.char) {
      case "q":
        return { kind: "quit" };
      case "k":
        move(state, -1);
        break;
      case "j":
        move(state, 1);
        break;
      case "f":
        state.filterIndex = (state.filterIndex + 1) % PICKER_FILTERS.length;
        relayout(state);
        break;
      case "F":
        state.filterIndex = (state.filterIndex + PICKER_FILTERS.length - 1) % PICKER_FILTERS.length;
        relayout(state);
        break;
    }
    return undefined;
  }
  switch (key) {
    case "escape":
      return { kind: "quit" };
    case "up":
      move(state, -1);
      break;
    case "down":
      move(state, 1);
      break;
    case "pageUp":
      move(state, -pageSize);
      break;
    case "pageDown":
      move(state, pageSize);
      break;
    case "home":
      move(state, -Number.MAX_SAFE_INTEGER);
      break;
    case "end":
      move(state, Number.MAX_SAFE_INTEGER);
      break;
    case "left":
      foldOrParent(state);
      break;
    case "right":
      if (state.selectedId !== undefined && state.collapsed.delete(state.selectedId)) relayout(state);
      break;
    case "enter":
      if (state.selectedId === undefined) break;
      if (state.selectedId === state.leafId) return { kind: "navigate", targetId: state.selectedId, summarize: false };
      state.mode = { kind: "confirm", targetId: state.selectedId };
      break;
  }
  return undefined;
}

/** ←: fold the selected entry's subtree; on a folded or childless entry, go to its parent row. */
function foldOrParent(state: PickerState): void {
  const index = selectedIndex(state);
  const row = state.rows[index];
  if (row?.kind !== "node") return;
  const id = row.node.entry.id;
  if (row.hasChildren && !state.collapsed.has(id)) {
    state.collapsed.add(id);
    relayout(state);
    return;
  }
  const parentId = row.node.entry.parentId;
  if (parentId !== null && state.rows.some((other) => other.kind === "node" && other.node.entry.id === parentId))
    state.selectedId = parentId;
}

/** The screen: title, the window of rows around the selection, the mode's line, the keys. */
export function drawScreen(state: PickerState, width: number, height: number, color: boolean): string[] {
  const style = styler(color);
  const listHeight = Math.max(1, height - 3);
  const index = Math.max(0, selectedIndex(state));
  if (index < state.scroll) state.scroll = index;
  if (index >= state.scroll + listHeight) state.scroll = index - listHeight + 1;
  state.scroll = Math.max(0, Math.min(state.scroll, Math.max(0, state.rows.length - listHeight)));

  const filter = PICKER_FILTERS[state.filterIndex] ?? "all";
  const lines = [
    cut(style("bold", `${state.title} · filter: ${FILTER_NAMES[filter]}${state.around ? ` · around ${state.around.id}` : ""}`), width),
  ];
  const shown = state.rows.slice(state.scroll, state.scroll + listHeight);
  for (const [offset, row] of shown.entries()) {
    const selected = state.scroll + offset === index && row.kind === "node";
    const line = rowLine(row, { width: width - 2, replaced: state.replaced, style: selected ? styler(false) : style });
    lines.push(selected ? style("inverse", `› ${line}`) : `  ${line}`);
  }
  if (state.rows.length === 0) lines.push(style("dim", "  (no entries match this filter: press f)"));
  while (lines.length < height - 2) lines.push("");
  lines.push(cut(modeLine(state, style), width));
  lines.push(cut(style("dim", keysLine(state)), width));
  return lines;
}

function modeLine(state: PickerState, style: ReturnType<typeof styler>): string {
  const mode = state.mode;
  if (mode.kind === "confirm")
    return style("yellow", `Go to ${mode.targetId}. Summarize the branch you leave? [y]es  [n]o  [i] yes, with instructions`);
  if (mode.kind === "instructions") return `${style("yellow", "Focus the summary on:")} ${mode.text}█`;
  const row = state.rows[selectedIndex(state)];
  return row?.kind === "node"
    ? style("dim", `${selectedIndex(state) + 1}/${state.rows.length}  ${row.node.entry.id}${row.node.isLeaf ? " (current leaf)" : ""}`)
    : "";
}

function keysLine(state: PickerState): string {
  if (state.mode.kind === "confirm") return "y/n/i choose · Esc back · Ctrl-C quit";
  if (state.mode.kind === "instructions") return "type the instructions · Enter summarize and go · Esc back";
  return "↑/↓ move · ←/→ fold/unfold · f filter · Enter go here · q quit";
}

function cut(line: string, width: number): string {
  return cutVisible(line, width);
}

/** Raw terminal input → keys (a chunk may hold several keys, or escape sequences). */
export function parseKeys(data: string): Key[] {
  const keys: Key[] = [];
  const sequences: [string, Key][] = [
    ["\x1b[A", "up"],
    ["\x1bOA", "up"],
    ["\x1b[B", "down"],
    ["\x1bOB", "down"],
    ["\x1b[C", "right"],
    ["\x1bOC", "right"],
    ["\x1b[D", "left"],
    ["\x1bOD", "left"],
    ["\x1b[5~", "pageUp"],
    ["\x1b[6~", "pageDown"],
    ["\x1b[H", "home"],
    ["\x1b[1~", "home"],
    ["\x1b[F", "end"],
    ["\x1b[4~", "end"],
  ];
  let rest = data;
  outer: while (rest.length > 0) {
    for (const [sequence, key] of sequences) {
      if (rest.startsWith(sequence)) {
        keys.push(key);
        rest = rest.slice(sequence.length);
        continue outer;
      }
    }
    const [char] = Array.from(rest);
    rest = rest.slice(char!.length);
    if (char === "\r" || char === "\n") keys.push("enter");
    else if (char === "\x1b") {
      // An unknown escape sequence is skipped whole; a lone Esc is the key.
      const unknown = /^\[[0-9;]*[~A-Za-z]/.exec(rest);
      if (unknown) rest = rest.slice(unknown[0].length);
      else keys.push("escape");
    } else if (char === "\x7f" || char === "\b") keys.push("backspace");
    else if (char === "\x03") keys.push("interrupt");
    else if (char! >= " ") keys.push({ char: char! });
  }
  return keys;
}
