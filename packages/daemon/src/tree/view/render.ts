/**
 * The session tree for a terminal (`base-context tree`): one line per entry, Unicode box lines
 * where the conversation branches, the current leaf, labels, compactions and branch summaries
 * marked, long linear stretches folded, and every line cut to the width.
 *
 * Pure (nodes in, text out) so it can be snapshot-tested. Renders from the FLAT node list of
 * `session/tree` (nested JSON cannot carry deep sessions); the rows come from layout.ts.
 */
import type { SessionEntry } from "@base-context/protocol";
import { formatRetention, PROBE_KINDS, type RetentionReport } from "@base-context/core";
import { layoutTree, type FlatNode, type TreeRow } from "./layout.js";
import { entryPreview, type EntryKind } from "./preview.js";
import { replacedCounts } from "./replaced.js";
import { cutVisible, visibleLength } from "./visible-text.js";

export { FOLD_KEEP_HEAD, FOLD_KEEP_TAIL, FOLD_MIN_HIDDEN, type FlatNode } from "./layout.js";
export { cutVisible, visibleLength } from "./visible-text.js";

export interface RenderTreeOptions {
  /** Show every entry: no folding. */
  all?: boolean;
  /** ANSI colours (the caller decides: a TTY without NO_COLOR). */
  color?: boolean;
  /** Cut every line to this many columns (previews shrink first); default: no limit. */
  width?: number;
  /** Branches nested deeper than this many branch points are summed up in one line. */
  maxBranchDepth?: number;
  /**
   * Entries each summary replaced, by id. Computed from `nodes` when absent; pass the counts of
   * the whole tree when `nodes` is a filtered view (its parents are not the real ones).
   */
  replaced?: ReadonlyMap<string, number>;
}

const ANSI = {
  reset: "\x1b[0m",
  bold: "\x1b[1m",
  dim: "\x1b[2m",
  red: "\x1b[31m",
  green: "\x1b[32m",
  yellow: "\x1b[33m",
  magenta: "\x1b[35m",
  cyan: "\x1b[36m",
  inverse: "\x1b[7m",
} as const;
export type StyleName = keyof typeof ANSI;

const KIND_STYLE: Partial<Record<EntryKind, StyleName>> = {
  user: "bold",
  "tool error": "red",
  compaction: "magenta",
  "branch summary": "cyan",
  label: "dim",
  model: "dim",
  "thinking level": "dim",
  "session name": "dim",
  "plugin data": "dim",
};

/** Shortest preview kept when a line is cut to the width, as long as the line still fits. */
const MIN_PREVIEW = 16;

export function renderTree(nodes: readonly FlatNode[], options: RenderTreeOptions = {}): string {
  if (nodes.length === 0) return "(empty session)\n";
  const style = styler(options.color === true);
  const replaced = options.replaced ?? replacedCounts(nodes);
  const rows = layoutTree(nodes, {
    all: options.all === true,
    ...(options.maxBranchDepth !== undefined ? { maxBranchDepth: options.maxBranchDepth } : {}),
  });
  const lines = rows.map((row) => rowLine(row, { width: options.width, replaced, style }));
  return `${lines.join("\n")}\n`;
}

export interface RowLineOptions {
  width?: number | undefined;
  replaced: ReadonlyMap<string, number>;
  style: Styler;
}

/** One row as a line of text, never wider than `width`. */
export function rowLine(row: TreeRow, options: RowLineOptions): string {
  const { style } = options;
  const prefix = style("dim", row.prefix);
  let line: string;
  if (row.kind === "fold") line = prefix + style("dim", `… ${row.count} more entries …`);
  else if (row.kind === "deeper")
    line = prefix + style("dim", `… ${row.count} entries in ${row.branches} deeper branches (raise --depth) …`);
  else line = prefix + nodeLine(row.node, visibleLength(row.prefix), options, row.hiddenBelow);
  return options.width === undefined ? line : cutVisible(line, options.width);
}

function nodeLine(node: FlatNode, prefixWidth: number, options: RowLineOptions, hiddenBelow: number): string {
  const { style } = options;
  const { kind, text } = entryPreview(node.entry);
  const head = kind === "compaction" || kind === "branch summary" ? `[${kind}]` : `${kind}:`;
  const tags: string[] = [];
  const replaced = options.replaced.get(node.entry.id);
  if (replaced !== undefined) tags.push(style("dim", `(replaced ${replaced} ${replaced === 1 ? "entry" : "entries"})`));
  const checked = importedRetention(node.entry);
  if (checked !== undefined) tags.push(style(checked.lost ? "yellow" : "dim", `[${checked.line}]`));
  if (node.label !== undefined) tags.push(style("yellow", `[label: ${node.label}]`));
  if (hiddenBelow > 0) tags.push(style("dim", `[+${hiddenBelow} folded]`));
  if (node.isLeaf) tags.push(style("green", style("bold", "← current leaf")));
  const tagText = tags.length > 0 ? `  ${tags.join(" ")}` : "";

  let preview = text;
  if (options.width !== undefined) {
    const fixed = prefixWidth + node.entry.id.length + 1 + head.length + 1 + visibleLength(tagText);
    preview = cut(
      preview,
      Math.max(Math.min(MIN_PREVIEW, options.width - prefixWidth - node.entry.id.length - head.length - 2), options.width - fixed, 1),
    );
  }
  const kindStyle = KIND_STYLE[kind];
  const body = preview.length > 0 ? `${head} ${preview}` : head;
  return `${style("dim", node.entry.id)} ${kindStyle ? style(kindStyle, body) : body}${tagText}`;
}

const AGENT_NAMES: Record<string, string> = { "claude-code": "Claude Code", codex: "Codex" };

/**
 * The retention line of a compaction another agent summarized (Claude Code's, Codex's; imported and checked
 * at import): `Claude Code's summary kept 2/2 files, 0/1 errors`, and whether it lost anything.
 */
function importedRetention(entry: SessionEntry): { line: string; lost: boolean } | undefined {
  if (entry.type !== "compaction" || typeof entry.details !== "object" || entry.details === null) return undefined;
  const { source, retention } = entry.details as { source?: unknown; retention?: unknown };
  const agent = typeof source === "string" ? AGENT_NAMES[source] : undefined;
  if (agent === undefined || !isReport(retention)) return undefined;
  const lost = PROBE_KINDS.some((kind) => retention[kind].kept < retention[kind].total);
  return { line: `${agent}'s summary ${formatRetention(retention)}`, lost };
}

function isReport(value: unknown): value is RetentionReport {
  if (typeof value !== "object" || value === null) return false;
  return PROBE_KINDS.every((kind) => {
    const count = (value as Record<string, unknown>)[kind] as { kept?: unknown; total?: unknown } | undefined;
    return typeof count?.kept === "number" && typeof count.total === "number";
  });
}

/** Cuts to at most `max` characters (code points, not halves of surrogate pairs), ending with "…". */
function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, Math.max(0, max - 1)).join("").trimEnd()}…`;
}

export type Styler = (name: StyleName, text: string) => string;

export function styler(color: boolean): Styler {
  return color ? (name, text) => (text.length === 0 ? text : `${ANSI[name]}${text}${ANSI.reset}`) : (_name, text) => text;
}
