/**
 * vitest global setup: gives the run one scoreboard file and prints its table when the run ends
 * (see scoreboard.ts). Prints nothing when no adversarial test ran.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatScoreboard, SCOREBOARD_ENV, type ScoreRow } from "./scoreboard.js";

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), "bc-scoreboard-"));
  const file = join(dir, "rows.jsonl");
  process.env[SCOREBOARD_ENV] = file;
  return () => {
    try {
      if (!existsSync(file)) return;
      const rows = readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as ScoreRow);
      if (rows.length > 0) process.stdout.write(`\n${formatScoreboard(rows)}\n\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
