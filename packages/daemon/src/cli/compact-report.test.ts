import { describe, expect, it } from "vitest";
import { SPLIT_TURN_SEPARATOR } from "@base-context/core";
import { printCompactReport, renderSummary, type CompactReport } from "./compact-report.js";
import { styleFor, type CliIo } from "./output.js";

const plain = styleFor({ isTTY: false }, {});

function printed(report: CompactReport, env: NodeJS.ProcessEnv = {}): string {
  let out = "";
  const stdout = {
    write: (text: string) => {
      out += text;
      return true;
    },
  };
  const io: CliIo = { stdout, stderr: { write: () => true }, env };
  printCompactReport(io, report);
  return out;
}

const base: CompactReport = {
  sessionId: "s-1",
  status: "committed",
  summarizer: "extractive",
  entry: {
    type: "compaction",
    id: "c1",
    parentId: "e9",
    timestamp: "2026-01-01T00:00:00.000Z",
    summary: "## Goal\nShip it",
    firstKeptEntryId: "e7",
    tokensBefore: 900,
    details: { summarizer: "extractive" },
  },
  stats: { summarizedMessages: 6, turnPrefixMessages: 0, keptEntries: 3, isSplitTurn: false, tokensBefore: 900, durationMs: 12 },
  contextTokens: { before: 1000, after: 250 },
  contextMessages: { before: 9, after: 4 },
  durationMs: 15,
  summarizerConfig: {
    provider: "auto",
    apiKeyEnv: "OPENAI_API_KEY",
    keySet: false,
    modelNamed: false,
    settingsPath: "/srv/bc-home/settings.json",
  },
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
    // The settings file this run reads (BASE_CONTEXT_HOME), not the default one.
    expect(text).toContain("/srv/bc-home/settings.json");
    expect(text).not.toContain("~/.base-context");
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
    const entry = {
      ...base.entry!,
      details: { summarizer: "extractive", fallback: { from: "openai:m", error: "HTTP 500: down" } },
    } as CompactReport["entry"];
    const text = printed({ ...base, entry, summarizerConfig: { ...base.summarizerConfig, keySet: true } });
    expect(text).toMatch(/Summarizer\s+extractive \(fallback: HTTP 500: down\)/);
    expect(text).toContain("base-context doctor");
    expect(text).not.toContain("export OPENAI_API_KEY");
  });

  it("explains nothing to compact and suggests keeping less than what just found nothing", () => {
    const { entry: _entry, stats: _stats, summarizer: _summarizer, ...rest } = base;
    const nothing = { ...rest, status: "nothing_to_compact" as const, message: "nothing to summarize: everything fits in the kept part" };
    const text = printed({ ...nothing, contextTokens: { before: 50_000, after: 50_000 }, keepRecentTokens: 2000 });
    expect(text).toContain("Nothing to compact: nothing to summarize: everything fits in the kept part.");
    expect(text).toContain("--keep-recent 1000");
    expect(text).not.toContain("--keep-recent 2000");
    expect(printed({ ...nothing, contextTokens: { before: 52_907, after: 52_907 }, keepRecentTokens: 20_000 })).toContain(
      "--keep-recent 10000",
    );
    expect(printed({ ...nothing, contextTokens: { before: 9_000, after: 9_000 }, keepRecentTokens: 20_000 })).toContain(
      "--keep-recent 4500",
    );
    // Nothing smaller is worth trying: no --keep-recent hint at all.
    expect(printed({ ...nothing, contextTokens: { before: 150, after: 150 }, keepRecentTokens: 20_000 })).not.toContain("--keep-recent");
    expect(printed({ ...nothing, contextTokens: { before: 50_000, after: 50_000 }, keepRecentTokens: 100 })).not.toContain("--keep-recent");
  });

  it("says which token total is which: the count and pi's estimate", () => {
    const text = printed({ ...base, countMethod: "counted with o200k_base" });
    expect(text).toMatch(/Context\s+1,000 → 250 tokens \(75% smaller, counted with o200k_base\)/);
    expect(text).toMatch(
      /Estimate\s+900 tokens before \(pi's estimate: the model's last reported usage \+ 4 characters a token after it; .*stored as tokensBefore\)/,
    );
  });

  it("names a plugin that failed, with where, next to the summarizer that wrote the summary instead", () => {
    const text = printed({
      ...base,
      pluginFailures: [{ pluginId: "global:boom", kind: "exception", message: "TypeError: no (at index.mjs:2:9)" }],
    });
    expect(text).toMatch(/Summarizer\s+extractive \(plugin global:boom failed: TypeError: no \(at index.mjs:2:9\); built in, offline\)/);
    const timeout = printed({
      ...base,
      pluginFailures: [{ pluginId: "global:slow", kind: "timeout", message: "no answer within 30000 ms" }],
    });
    expect(timeout).toContain("plugin global:slow failed: timeout: no answer within 30000 ms");
  });

  it("prints hints as commands that run here", () => {
    const text = printed({ ...base, cli: "node packages/daemon/dist/cli/main.js" });
    expect(text).toContain("  node packages/daemon/dist/cli/main.js show s-1 --brief");
    expect(text).not.toMatch(/^ {2}base-context /m);
  });
});
