import { describe, expect, it } from "vitest";
import { exportOrder, type EntryLink } from "./export-order.js";

const link = (seq: number, id: string, parentId: string | null): EntryLink => ({ seq, id, parentId });

/** r → a → b (first branch) and a → c → d (second branch), written in that order. */
const links = [link(1, "r", null), link(2, "a", "r"), link(3, "b", "a"), link(4, "c", "a"), link(5, "d", "c")];

describe("exportOrder", () => {
  it("keeps insertion order when the leaf is the last entry", () => {
    expect(exportOrder(links, "d")).toEqual({});
    expect(exportOrder([], null)).toEqual({});
  });

  it("after navigating to another branch, writes parents first and ends with the leaf", () => {
    const { order, warning } = exportOrder(links, "b");
    expect(warning).toBeUndefined();
    expect(order).toEqual([1, 2, 4, 5, 3]);
    // Every parent comes before its children.
    const at = new Map(order!.map((seq, index) => [seq, index]));
    for (const entry of links) {
      const parent = links.find((other) => other.id === entry.parentId);
      if (parent) expect(at.get(parent.seq)!).toBeLessThan(at.get(entry.seq)!);
    }
  });

  it("warns when the leaf has entries under it, or when there is no leaf", () => {
    expect(exportOrder(links, "a")).toEqual({ warning: expect.stringContaining("the current position a has later entries under it") });
    expect(exportOrder(links, null)).toEqual({ warning: expect.stringContaining("positioned before its first entry") });
  });

  it("handles deep chains without recursion and orphans as roots", () => {
    const chain: EntryLink[] = [];
    for (let i = 0; i < 50_000; i++) chain.push(link(i + 1, `n${i}`, i === 0 ? null : `n${i - 1}`));
    chain.push(link(50_001, "side", "n10"));
    chain.push(link(50_002, "orphan", "missing"));
    const { order } = exportOrder(chain, "n49999");
    expect(order).toHaveLength(50_002);
    expect(order![order!.length - 1]).toBe(50_000);
  });
});
