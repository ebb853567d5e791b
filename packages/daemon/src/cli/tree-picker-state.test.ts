import type { SessionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import type { FlatNode } from "../tree/view/index.js";
import { drawScreen, initialState, parseKeys, pressKey } from "./tree-picker-state.js";

const at = "2026-01-01T00:00:00.000Z";
const user = (id: string, parentId: string | null, text: string): FlatNode => ({
  entry: { type: "message", id, parentId, timestamp: at, message: { role: "user", content: text } },
});
const answer = (id: string, parentId: string, text: string): FlatNode => ({
  entry: {
    type: "message",
    id,
    parentId,
    timestamp: at,
    message: { role: "assistant", content: [{ type: "text", text }] },
  } as SessionEntry,
});

function state() {
  const nodes = [
    user("u1", null, "first"),
    answer("a1", "u1", "one"),
    user("u2", "a1", "redis"),
    answer("a2", "u2", "two"),
    user("u3", "a1", "memory"),
    { ...answer("a3", "u3", "three"), isLeaf: true },
  ];
  return initialState({ nodes, replaced: new Map(), leafId: "a3", title: "session s" });
}

describe("tree picker keys", () => {
  it("parses arrows, page keys, enter, escape, backspace and text from raw input", () => {
    expect(parseKeys("\x1b[A\x1b[B\x1bOC\x1b[D\x1b[5~\x1b[6~\rq\x1b\x7f\x03é")).toEqual([
      "up",
      "down",
      "right",
      "left",
      "pageUp",
      "pageDown",
      "enter",
      { char: "q" },
      "escape",
      "backspace",
      "interrupt",
      { char: "é" },
    ]);
    expect(parseKeys("\x1b[1;5A")).toEqual([]);
  });

  it("starts on the leaf, moves, and asks before navigating away; instructions are typed in", () => {
    const s = state();
    expect(s.selectedId).toBe("a3");
    pressKey(s, "up", 10);
    pressKey(s, "up", 10);
    expect(s.selectedId).toBe("a2");
    expect(pressKey(s, "enter", 10)).toBeUndefined();
    expect(s.mode).toEqual({ kind: "confirm", targetId: "a2" });
    pressKey(s, { char: "i" }, 10);
    for (const char of "tests!") pressKey(s, { char }, 10);
    pressKey(s, "backspace", 10);
    expect(pressKey(s, "enter", 10)).toEqual({ kind: "navigate", targetId: "a2", summarize: true, instructions: "tests" });
  });

  it("folds and unfolds, toggles filters, and draws within the screen", () => {
    const s = state();
    pressKey(s, "home", 10);
    pressKey(s, "down", 10);
    expect(s.selectedId).toBe("a1");
    pressKey(s, "left", 10);
    expect(s.rows.map((row) => (row.kind === "node" ? row.node.entry.id : row.kind))).toEqual(["u1", "a1"]);
    const folded = drawScreen(s, 40, 8, false);
    expect(folded).toHaveLength(8);
    expect(folded[2]).toBe("› a1 assistant: one  [+4 folded]");
    pressKey(s, "right", 10);
    expect(s.rows).toHaveLength(6);
    pressKey(s, { char: "f" }, 10);
    expect(s.rows.map((row) => (row.kind === "node" ? row.node.entry.id : row.kind))).toEqual(["u1", "u2", "u3", "a3"]);
    expect(drawScreen(s, 40, 8, false)[0]).toBe("session s · filter: user messages");
    expect(pressKey(s, { char: "q" }, 10)).toEqual({ kind: "quit" });
  });
});
