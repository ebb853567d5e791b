import type { CompactionPreparation } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { INITIAL_SUMMARY_PROMPT, TURN_PREFIX_SUMMARY_PROMPT } from "./prompts.js";
import { preparationOf } from "../test-support.js";
import { assembleCompactionSummary, mergeSplitTurn, planCompactionSummary, stripFileOps } from "./summary.js";

const preparation = (overrides: Partial<CompactionPreparation>) =>
  preparationOf({ fileOps: { readFiles: ["r.ts"], modifiedFiles: [] }, ...overrides });

describe("mergeSplitTurn", () => {
  it("joins history and turn prefix with the split-turn marker", () => {
    expect(mergeSplitTurn("H", "P")).toBe("H\n\n---\n\n**Turn Context (split turn):**\n\nP");
  });

  it("says there is no prior history when the history is empty", () => {
    expect(mergeSplitTurn("", "P")).toBe("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nP");
  });
});

describe("planCompactionSummary", () => {
  it("asks for the history only when the turn is not split", () => {
    const plan = planCompactionSummary(preparation({}), "focus");
    expect(plan.turnPrefix).toBeUndefined();
    expect(plan.history?.maxTokens).toBe(13107);
    expect(plan.history?.prompt.endsWith(`${INITIAL_SUMMARY_PROMPT}\n\nAdditional focus: focus`)).toBe(true);
  });

  it("asks for both summaries of a split turn with their own budgets", () => {
    const plan = planCompactionSummary(
      preparation({ isSplitTurn: true, turnPrefixMessages: [{ role: "user", content: "prefix" }], turnPrefixEntryIds: ["p"] }),
    );
    expect(plan.history?.maxTokens).toBe(13107);
    expect(plan.turnPrefix?.maxTokens).toBe(8192);
    expect(plan.turnPrefix?.prompt).toBe(`<conversation>\n[User]: prefix\n</conversation>\n\n${TURN_PREFIX_SUMMARY_PROMPT}`);
    const { summary } = assembleCompactionSummary(preparation({ isSplitTurn: true }), plan, { history: "H", turnPrefix: "P" });
    expect(summary).toBe("H\n\n---\n\n**Turn Context (split turn):**\n\nP\n\n<read-files>\nr.ts\n</read-files>");
  });

  it("makes no history request for a split turn without history, writing No prior history.", () => {
    const prep = preparation({
      messagesToSummarize: [],
      summarizeEntryIds: [],
      isSplitTurn: true,
      turnPrefixMessages: [{ role: "user", content: "prefix" }],
      turnPrefixEntryIds: ["p"],
      fileOps: { readFiles: [], modifiedFiles: [] },
    });
    const plan = planCompactionSummary(prep);
    expect(plan.history).toBeUndefined();
    expect(assembleCompactionSummary(prep, plan, { turnPrefix: "P" }).summary).toBe(
      "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nP",
    );
  });

  it("carries the previous summary over, without its file lists, when a split turn has no new history", () => {
    const prep = preparation({
      messagesToSummarize: [],
      summarizeEntryIds: [],
      isSplitTurn: true,
      turnPrefixMessages: [{ role: "user", content: "prefix" }],
      turnPrefixEntryIds: ["p"],
      previousSummary: "OLD\n\n<read-files>\nold.ts\n</read-files>\n\n<modified-files>\nm.ts\n</modified-files>",
      fileOps: { readFiles: ["old.ts"], modifiedFiles: ["m.ts"] },
    });
    const plan = planCompactionSummary(prep);
    expect(plan.historyWithoutRequest).toBe("OLD");
    expect(assembleCompactionSummary(prep, plan, { turnPrefix: "P" }).summary).toBe(
      "OLD\n\n---\n\n**Turn Context (split turn):**\n\nP\n\n<read-files>\nold.ts\n</read-files>\n\n<modified-files>\nm.ts\n</modified-files>",
    );
  });
});

describe("stripFileOps", () => {
  it("removes only trailing file sections", () => {
    expect(stripFileOps("S\n\n<read-files>\na\nb\n</read-files>")).toBe("S");
    expect(stripFileOps("S\n\n<modified-files>\na\n</modified-files>")).toBe("S");
    expect(stripFileOps("<read-files>\na\n</read-files>\n\nS")).toBe("<read-files>\na\n</read-files>\n\nS");
    expect(stripFileOps("S")).toBe("S");
  });
});
