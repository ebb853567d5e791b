import { describe, expect, it } from "vitest";
import { SPLIT_TURN_SEPARATOR } from "../core/index.js";
import { printCompactReport, renderSummary, type CompactReport } from "./compact-report.js";
import { styleFor, type CliIo } from "./output.js";

const plain = styleFor({ isTTY: false }, {});

function printed(report: CompactReport, env: NodeJS.ProcessEnv = {}): string {
  let out = "";
  const io: CliIo = { stdout: { write: (text: string) => ((out += text), true) }, stderr: { write: () => true }, env };
  printCompactReport(io, report);
  return out;
}

const base: CompactReport = {
  sessionId: "s-1",
  status: "committed",
  summarizer: "extractive",
  entry: { type: "compaction", id: "c1", parentId: "e9", timestamp: "2026-01-01T00:00:00.000Z", summary: "## Goal\nShip it", firstKeptEntryId: "e7", tokensBefore: 900, details: { summarizer: "extractive" } },
  stats: { summarizedMessages: 6, turnPrefixMessages: 0, keptEntries: 3, isSplitTurn: false, tokensBefore: 900, durationMs: 12 },
  contextTokens: { before: 1000, after: 250 },
  contextMessages: { before: 9, after: 4 },
  durationMs: 15,
  summarizerConfig: { provider: "auto", apiKeyEnv: "OPENAI_API_KEY", keySet: false, modelNamed: false },
};

describe("renderSummary", () => {
  it("turns headings, checkboxes, file sections and the split-turn separator into readable text", () => {
    const summary = `## Goal\nShip it\n\n### Done\n- [x] wrote it\n- [ ] test it${SPLIT_TURN_SEPARATOR}## Original Request\nfix\n\n<read-files>\na.ts\nb.ts\n</read-files>\n\n<modified-files>\nc.ts\n</modified-files>`;
    expect(renderSummary(summary, plain)).toBe(
      "Goal\nShip it\n\nDone\n✓ wrote it\n○ test it\n\n---\n\nTurn Context (split turn)\n\nOriginal Request\nfix\n\nFiles read\n- a.ts\n- b.ts\n\nFiles modified\n- c.ts",
    );
  });
});

describe("printCompactReport", () => {
  it("says what happened in numbers and what to try next", () => {
    const text = printed(base);
    expect(text).toMatch(/Context\s+1,000 → 250 tokens \(75% smaller\)/);
    expect(text).toMatch(/Summarized\s+6 messages/);
    expect(text).toMatch(/Kept\s+3 entries verbatim, from e7/);
    expect(text).toMatch(/Split turn\s+no/);
    expect(text).toMatch(/Summarizer\s+extractive \(built in, offline\)/);
    expect(text).toContain("base-context show s-1 --brief");
    // No model named: a key alone would not change the summarizer, so naming the model is the hint.
    expect(text).toContain("to have a model write the summary, name it: summarizer.model");
    expect(text).not.toContain("export OPENAI_API_KEY");
    expect(text).not.toContain("\u001b[");
  });

  it("prints the retention line and the first items the summary lost", () => {
    const count = (kept: number, total: number) => ({ kept, total });
    const retention = {
      files: count(41, 41),
      errors: count(6, 7),
      constraints: count(9, 9),
      requests: count(4, 5),
      plan: count(0, 0),
      missing: { files: [], errors: ["TypeError: x is undefined"], constraints: [], requests: ["Add a retry"], plan: [] },
      repaired: { files: 2, errors: 0, constraints: 1 },
    };
    const text = printed({ ...base, retention });
    expect(text).toMatch(/Retention\s+kept 41\/41 files, 6\/7 errors, 9\/9 constraints, 4\/5 requests \(repair added 3 items\)/);
    expect(text).toMatch(/Lost\s+error "TypeError: x is undefined"; request "Add a retry"/);
    // Read from the entry when the result did not carry it.
    const entry = { ...base.entry!, details: { summarizer: "extractive", retention } } as CompactReport["entry"];
    expect(printed({ ...base, entry })).toMatch(/Retention\s+kept 41\/41 files/);
  });

  it("asks for the key when the settings name a model but the key is missing", () => {
    const text = printed({ ...base, summarizerConfig: { ...base.summarizerConfig, modelNamed: true } });
    expect(text).toContain("export OPENAI_API_KEY=sk-…");
  });

  it("names the fallback and points at doctor when the model failed", () => {
    const entry = { ...base.entry!, details: { summarizer: "extractive", fallback: { from: "openai:m", error: "HTTP 500: down" } } } as CompactReport["entry"];
    const text = printed({ ...base, entry, summarizerConfig: { ...base.summarizerConfig, keySet: true } });
    expect(text).toMatch(/Summarizer\s+extractive \(fallback: HTTP 500: down\)/);
    expect(text).toContain("base-context doctor");
    expect(text).not.toContain("export OPENAI_API_KEY");
  });

  it("explains nothing to compact and suggests keeping less", () => {
    const { entry: _entry, stats: _stats, summarizer: _summarizer, ...rest } = base;
    const text = printed({ ...rest, status: "nothing_to_compact", message: "nothing to summarize: everything fits in the kept part" });
    expect(text).toContain("Nothing to compact: nothing to summarize: everything fits in the kept part.");
    expect(text).toContain("--keep-recent 2000");
  });
});
