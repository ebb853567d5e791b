/**
 * The retention corpus (examples/sessions/corpus, docs/retention.md): the extractive summarizer
 * must keep every file, ≥ 95 % of the errors, ≥ 90 % of the constraints and of the user's
 * requests, and write no junk line. The bench reports the same numbers (`pnpm bench`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkRetention, junkLines, PROBE_KINDS, probeMessages, type ProbeKind } from "@base-context/core";
import { piSessionMessages } from "../../sessions/index.js";
import { extractiveSummary } from "./index.js";

const CORPUS = join(import.meta.dirname, "..", "..", "..", "..", "..", "examples", "sessions", "corpus");
const files = readdirSync(CORPUS).filter((name) => name.endsWith(".jsonl")).sort();

function summarize(name: string) {
  const messages = piSessionMessages(readFileSync(join(CORPUS, name), "utf8"));
  const summary = extractiveSummary({ kind: "history", messages, maxTokens: 13_107 });
  const probes = probeMessages(messages);
  return { messages, summary, probes, report: checkRetention(summary, probes), junk: junkLines(summary) };
}

describe("the retention corpus with the extractive summarizer", () => {
  const results = files.map((name) => ({ name, ...summarize(name) }));

  it("has at least 8 sessions in all three pi format versions", () => {
    expect(files.length).toBeGreaterThanOrEqual(8);
    const versions = new Set(
      files.map((name) => (JSON.parse(readFileSync(join(CORPUS, name), "utf8").split("\n", 1)[0]!) as { version?: number }).version ?? 1),
    );
    expect([...versions].sort()).toEqual([1, 2, 3]);
  });

  it("keeps every file, ≥ 95 % of errors, ≥ 90 % of constraints and requests", () => {
    const share = (kind: ProbeKind) => {
      const kept = results.reduce((sum, r) => sum + r.report[kind].kept, 0);
      const total = results.reduce((sum, r) => sum + r.report[kind].total, 0);
      return {
        kept,
        total,
        share: total === 0 ? 1 : kept / total,
        missing: results.flatMap((r) => r.report.missing[kind].map((m) => `${r.name}: ${m}`)),
      };
    };
    const shares = Object.fromEntries(PROBE_KINDS.map((kind) => [kind, share(kind)]));
    expect(shares.files!.missing).toEqual([]);
    expect(shares.errors!.share, shares.errors!.missing.join("\n")).toBeGreaterThanOrEqual(0.95);
    expect(shares.constraints!.share, shares.constraints!.missing.join("\n")).toBeGreaterThanOrEqual(0.9);
    expect(shares.requests!.share, shares.requests!.missing.join("\n")).toBeGreaterThanOrEqual(0.9);
    // Every kind has items to keep: the corpus exercises each probe.
    for (const kind of PROBE_KINDS) expect(shares[kind]!.total, kind).toBeGreaterThan(0);
  });

  it("writes no junk line (code, minified source or base64, headings as items, empty items)", () => {
    expect(results.flatMap((r) => r.junk.map((j) => `${r.name}: [${j.kind}] ${j.line}`))).toEqual([]);
  });
});
