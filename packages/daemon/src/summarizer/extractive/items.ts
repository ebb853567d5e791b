/**
 * Items and their priorities: how the extractive summarizer decides what survives a small
 * budget (higher priority), and in which order a list reads (chronological).
 */
import type { Noted } from "./facts.js";
import type { Item } from "./render.js";
import { normalizeKey } from "@base-context/core";

const itemIndex = new WeakMap<Item, number>();

function orderOf(item: Item): number {
  return itemIndex.get(item) ?? 0;
}

/** Reading order for a list: the budget uses priorities, the reader wants the story in order. */
export function chronological(items: Item[]): Item[] {
  return items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => orderOf(a.item) - orderOf(b.item) || a.i - b.i)
    .map((x) => x.item);
}

export function dedupe(items: Item[]): Item[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = normalizeKey(item.text);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Keeps the `max` highest-priority items, in their original order. */
export function cap(items: Item[], max: number): Item[] {
  if (items.length <= max) return items;
  const kept = new Set(
    items
      .map((item, i) => ({ item, i }))
      .sort((a, b) => b.item.priority - a.item.priority || b.i - a.i)
      .slice(0, max)
      .map((x) => x.item),
  );
  return items.filter((item) => kept.has(item));
}

const STOPWORDS = new Set([
  "focus",
  "about",
  "remember",
  "keep",
  "with",
  "that",
  "this",
  "from",
  "into",
  "also",
  "please",
  "make",
  "sure",
  "what",
  "when",
  "where",
  "which",
  "exact",
  "exactly",
  "the",
  "and",
]);

/** Priorities: a base per kind of item, + up to 5 for recency, + 12 when it matches the requested focus. */
export class Scorer {
  private readonly focusWords: string[];

  constructor(
    private readonly messageCount: number,
    customInstructions: string | undefined,
  ) {
    this.focusWords = (customInstructions ?? "")
      .toLowerCase()
      .split(/[^a-z0-9_./-]+/)
      .filter((w) => w.length >= 4 && !STOPWORDS.has(w));
  }

  boost(text: string, base: number): number {
    if (this.focusWords.length === 0) return base;
    const lower = text.toLowerCase();
    return this.focusWords.some((w) => lower.includes(w)) ? base + 12 : base;
  }

  noted(noted: Noted, base: number): Item {
    const recency = this.messageCount > 0 ? (5 * noted.index) / this.messageCount : 0;
    const item = { text: noted.text, priority: this.boost(noted.text, base) + recency };
    itemIndex.set(item, noted.index);
    return item;
  }

  /** Items carried over from a previous summary: older than anything in the range. */
  item(text: string, base: number): Item {
    const item = { text, priority: this.boost(text, base) };
    itemIndex.set(item, -1);
    return item;
  }
}

/** The `keep` most recent entries as items, and one line standing for all the older ones. */
export function latestAndRest<T extends Noted>(
  entries: T[],
  keep: number,
  s: Scorer,
  base: number,
  describeRest: (rest: T[]) => string,
): Item[] {
  const sorted = [...entries].sort((a, b) => a.index - b.index);
  const rest = sorted.slice(0, Math.max(0, sorted.length - keep));
  const latest = sorted.slice(rest.length);
  const items = latest.map((entry) => s.noted(entry, base));
  if (rest.length > 0) items.unshift(s.noted({ text: describeRest(rest), index: rest[rest.length - 1]!.index }, base - 2));
  return items;
}

/** `a, b, c (+4 more)` */
export function listed(values: string[], max: number): string {
  const shown = values.slice(0, max).join(", ");
  return values.length > max ? `${shown} (+${values.length - max} more)` : shown;
}

/**
 * One entry per "shape" (the text with its numbers blanked), the latest: an agent repeating
 * "Ported module_12 …" for every module made one decision, not forty.
 */
export function latestPerShape(noted: readonly Noted[]): Noted[] {
  const latest = new Map<string, Noted>();
  for (const n of noted) {
    const shape = normalizeKey(n.text).replace(/\d+/g, "#");
    latest.delete(shape);
    latest.set(shape, n);
  }
  return [...latest.values()];
}
