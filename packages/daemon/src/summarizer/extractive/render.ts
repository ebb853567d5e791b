/**
 * Lays a summary out as markdown and fits it into a character budget by dropping the
 * lowest-priority items first (headings always stay, so the format is always complete).
 */

export interface Item {
  readonly text: string;
  /** Higher survives longer. KEEP is never dropped (only clipped). */
  readonly priority: number;
}

export type Block =
  | { readonly kind: "heading"; readonly text: string }
  /** Items as lines: `marker` before each, `numbered` for 1. 2. 3., `paragraph` for bare lines. */
  | { readonly kind: "list"; readonly marker: string | "numbered" | "paragraph"; items: Item[]; readonly empty: string };

/** Far above any computed priority (those stay under ~120), so boosts never reach it. */
export const KEEP = 1000;

function itemLine(block: Extract<Block, { kind: "list" }>, item: Item, position: number): string {
  if (block.marker === "paragraph") return item.text;
  if (block.marker === "numbered") return `${position + 1}. ${item.text}`;
  return `${block.marker}${item.text}`;
}

export function render(blocks: readonly Block[]): string {
  const out: string[] = [];
  for (const block of blocks) {
    if (block.kind === "heading") {
      if (out.length > 0) out.push("");
      out.push(block.text);
      continue;
    }
    if (block.items.length === 0) out.push(block.empty);
    else block.items.forEach((item, i) => out.push(itemLine(block, item, i)));
  }
  return out.join("\n");
}

/**
 * Drops items, lowest priority first (older first among equals: they come first in their list),
 * until the rendered text fits `maxChars`. Items at KEEP priority are clipped instead when
 * nothing else is left to drop.
 */
export function fitToBudget(blocks: Block[], maxChars: number): void {
  let size = render(blocks).length;
  if (size <= maxChars) return;

  const candidates: Array<{ block: Extract<Block, { kind: "list" }>; item: Item; order: number }> = [];
  let order = 0;
  for (const block of blocks) {
    if (block.kind !== "list") continue;
    for (const item of block.items) if (item.priority < KEEP) candidates.push({ block, item, order: order++ });
  }
  candidates.sort((a, b) => a.item.priority - b.item.priority || a.order - b.order);

  for (const { block, item } of candidates) {
    if (size <= maxChars) return;
    const position = block.items.indexOf(item);
    // Numbered lines shift when one goes; their width barely changes, so this estimate holds.
    const lineLength = itemLine(block, item, position).length + 1;
    block.items.splice(position, 1);
    size -= lineLength;
    if (block.items.length === 0) size += block.empty.length + 1;
  }
  if (size <= maxChars) return;

  // Only kept items remain: clip the longest ones.
  for (const block of blocks) {
    if (block.kind !== "list") continue;
    block.items = block.items.map((item) => {
      if (size <= maxChars || item.text.length <= 80) return item;
      const keep = Math.max(80, item.text.length - (size - maxChars));
      size -= item.text.length - keep;
      return { ...item, text: `${item.text.slice(0, keep - 1)}…` };
    });
  }
}
