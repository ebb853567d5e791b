/**
 * The adversarial suite's scoreboard. Each adversarial test records what it tried, how many of
 * those the daemon survived and how much acknowledged data was lost; the suite's global teardown
 * (`scoreboard-setup.ts`) prints one table of every row at the end of the test run.
 *
 * Rows are appended as JSON lines to a file named by BC_ADVERSARIAL_SCOREBOARD, which the global
 * setup creates: vitest runs test files in separate processes, so a file is the one place they share.
 */
import { appendFileSync } from "node:fs";

export interface ScoreRow {
  /** The edge under attack: "framing", "plugins (worker)", "import", "sigkill", … */
  area: string;
  /** What was thrown at it, in a few words. */
  scenario: string;
  /** How many attempts were made (frames sent, kills, plugin runs, files imported…). */
  tried: number;
  /** How many of them left the daemon (or its store) answering correctly afterwards. */
  survived: number;
  /** Acknowledged data lost, duplicated or corrupted, or a daemon/connection taken down. Must be 0. */
  lost: number;
}

export const SCOREBOARD_ENV = "BC_ADVERSARIAL_SCOREBOARD";

export function recordScore(row: ScoreRow): void {
  const file = process.env[SCOREBOARD_ENV];
  if (file === undefined) return; // run outside the suite's global setup (a single file by hand)
  // The suite runs on both engines (vitest.config.ts): the PostgreSQL project's rows say so.
  const engine = process.env.BASE_CONTEXT_TEST_ENGINE === "postgres" ? " (postgres)" : "";
  appendFileSync(file, `${JSON.stringify({ ...row, area: `${row.area}${engine}` })}\n`);
}

export function formatScoreboard(rows: readonly ScoreRow[]): string {
  const header = ["area", "scenario", "tried", "survived", "lost"];
  const cells = rows.map((r) => [r.area, r.scenario, String(r.tried), String(r.survived), String(r.lost)]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]) => c.map((v, i) => (i >= 2 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join("  ");
  const total = rows.reduce((sum, r) => ({ tried: sum.tried + r.tried, survived: sum.survived + r.survived, lost: sum.lost + r.lost }), {
    tried: 0,
    survived: 0,
    lost: 0,
  });
  return [
    "Adversarial suite",
    line(header),
    ...cells.map(line),
    line(["total", "", String(total.tried), String(total.survived), String(total.lost)]),
  ].join("\n");
}
