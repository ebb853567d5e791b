/**
 * The summaries of the labelled real sessions (`../shared/corpus` beside the checkout, or the
 * folder BASE_CONTEXT_QUALITY_CORPUS names) judged against the labels people wrote, not against
 * our probes (docs/retention.md "Scoring against labels"), on the path users take: each session
 * compacted at about a third, about two thirds and where its settings put the cut, each
 * compaction updating the one before it (or the agent's own), each summary scored as of its cut.
 * The thresholds hold on the totals over every session and cut. The bench prints the same
 * figures per session and per cut, beside Claude Code's own summaries (`pnpm bench quality`).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Daemon } from "../../daemon.js";
import { compactAtCuts, corpusFolder, CORPUS_VARIABLE, labelledSessions } from "./fixtures/labelled-sessions.js";
import { scoreSummary, type Ratio, type SummaryScore } from "./fixtures/score.js";

const ROOT = join(import.meta.dirname, "..", "..", "..", "..", "..");
const CORPUS = corpusFolder(ROOT);
const present = existsSync(join(CORPUS, "labels"));

interface Scored {
  where: string;
  ours: SummaryScore;
  oneLine: SummaryScore;
}

function total(scores: readonly Scored[], pick: (score: SummaryScore) => Ratio): Ratio {
  return scores.reduce((sum, s) => ({ hit: sum.hit + pick(s.ours).hit, of: sum.of + pick(s.ours).of }), { hit: 0, of: 0 });
}

function share(ratio: Ratio): number {
  return ratio.of === 0 ? 1 : ratio.hit / ratio.of;
}

describe.skipIf(!present)("summaries of the labelled real sessions on the real path, scored as of each cut", () => {
  let home: string;
  let daemon: Daemon;
  const scored: Scored[] = [];
  let sessionCount = 0;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "bc-labelled-"));
    // A fresh home names no model: the summaries are the offline extractive summarizer's.
    daemon = new Daemon({ env: { BASE_CONTEXT_HOME: home }, databasePath: join(home, "sessions.db"), watchSettings: false });
    for (const session of labelledSessions(CORPUS)) {
      sessionCount++;
      const run = await compactAtCuts(daemon, session);
      for (const cut of run.cuts) {
        const window = { ...cut, modifiedAt: run.lines.modifiedAt, injectedTexts: run.lines.injectedTexts };
        scored.push({
          where: `${session.name} at ${cut.cut} (line ${cut.cutLine})`,
          ours: scoreSummary(cut.summary, session.labels, window),
          oneLine: scoreSummary(cut.oneLine, session.labels, window),
        });
      }
    }
  }, 180_000);

  afterAll(async () => {
    await daemon?.dispose();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const detail = (pick: (score: SummaryScore) => readonly unknown[], which: "ours" | "oneLine" = "ours") =>
    scored.flatMap((s) => pick(s[which]).map((item) => `${s.where}: ${JSON.stringify(item)}`)).join("\n");

  it("compacts every labelled session at least twice", () => {
    expect(sessionCount).toBeGreaterThan(0);
    expect(scored.length).toBeGreaterThanOrEqual(2 * sessionCount);
  });

  it("the Goal is never empty when a request precedes the cut", () => {
    expect(scored.filter((s) => s.ours.goal.expected && s.ours.goal.empty).map((s) => s.where)).toEqual([]);
  });

  it("keeps ≥ 80 % of the requests open at the cut", () => {
    expect(share(total(scored, (s) => s.openRequests.recall)), detail((s) => s.openRequests.missed)).toBeGreaterThanOrEqual(0.8);
  });

  it("constraints: precision ≥ 90 %, recall ≥ 70 %", () => {
    expect(share(total(scored, (s) => s.constraints.precision)), detail((s) => s.constraints.wrong)).toBeGreaterThanOrEqual(0.9);
    expect(share(total(scored, (s) => s.constraints.recall)), detail((s) => s.constraints.missed)).toBeGreaterThanOrEqual(0.7);
  });

  it("errors: ≥ 70 % of those open at the cut kept, none resolved before it listed as blocked or as a next step", () => {
    expect(share(total(scored, (s) => s.openErrors.recall)), detail((s) => s.openErrors.missed)).toBeGreaterThanOrEqual(0.7);
    expect(detail((s) => s.resolvedListed)).toBe("");
  });

  it("keeps ≥ 80 % of the files modified before the cut", () => {
    expect(share(total(scored, (s) => s.files.recall)), detail((s) => s.files.missed)).toBeGreaterThanOrEqual(0.8);
  });

  it("no junk line, no injected text, no Next Step contradicted", () => {
    expect(detail((s) => s.junk)).toBe("");
    expect(detail((s) => s.injected)).toBe("");
    expect(detail((s) => s.nextSteps.contradicted)).toBe("");
  });

  it("repair of a one-line model summary adds no wrong item", () => {
    const wrong = (s: SummaryScore) => [
      ...s.constraints.wrong,
      ...s.junk,
      ...s.injected,
      ...new Set([...s.resolvedListed, ...s.fromNotLists]),
    ];
    expect(detail(wrong, "oneLine")).toBe("");
  });
});

describe.skipIf(present)("summaries of the labelled real sessions", () => {
  it.skip(`skipped: no labelled corpus at ${CORPUS} (beside the repository, or set ${CORPUS_VARIABLE}; see docs/retention.md)`, () => {});
});
