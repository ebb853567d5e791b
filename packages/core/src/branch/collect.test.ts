import { describe, expect, it } from "vitest";
import { PathBuilder } from "../test-support.js";
import { collectEntriesForBranchSummary, findCommonAncestor } from "./collect.js";

describe("findCommonAncestor", () => {
  it("finds the deepest entry on both paths", () => {
    expect(findCommonAncestor(["A", "B", "C", "D"], ["A", "E", "F"])).toBe("A");
    expect(findCommonAncestor(["A", "B", "C"], ["A", "B", "X"])).toBe("B");
  });

  it("is the target itself when the target is on the old path", () => {
    expect(findCommonAncestor(["A", "B", "C"], ["A", "B"])).toBe("B");
  });

  it("is null when the paths share nothing", () => {
    expect(findCommonAncestor(["A"], ["Z"])).toBeNull();
    expect(findCommonAncestor([], ["Z"])).toBeNull();
  });
});

describe("collectEntriesForBranchSummary", () => {
  it("collects the old branch after the common ancestor, oldest first, compactions included", () => {
    const s = new PathBuilder();
    s.user("A"); // e1
    s.user("B"); // e2
    s.compaction({ summary: "C", firstKeptEntryId: "e2", tokensBefore: 1 }); // e3
    s.user("D"); // e4
    const { entries, commonAncestorId } = collectEntriesForBranchSummary(s.path, ["e1", "x1", "x2"]);
    expect(commonAncestorId).toBe("e1");
    expect(entries.map((item) => item.entry.id)).toEqual(["e2", "e3", "e4"]);
  });

  it("collects nothing when the target lies ahead on the old path, or there is no old leaf", () => {
    const s = new PathBuilder();
    s.user("A");
    s.user("B");
    expect(collectEntriesForBranchSummary(s.path, ["e1", "e2", "e3"]).entries).toEqual([]);
    expect(collectEntriesForBranchSummary([], ["e1"])).toEqual({ entries: [], commonAncestorId: null });
  });

  it("collects the whole old path when the target is in another root", () => {
    const s = new PathBuilder();
    s.user("A");
    s.user("B");
    expect(collectEntriesForBranchSummary(s.path, ["other"]).entries).toHaveLength(2);
  });
});
