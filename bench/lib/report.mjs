// How a bench file reports its measurements.
//
// Under bench/run.mjs, rows go as JSON lines to file descriptor BENCH_REPORT_FD (a pipe run.mjs
// opened), written synchronously so that none is lost when the process exits. Run on its own
// (`node bench/tokens.mjs`), a bench prints its rows as a table when it ends.
import { writeSync } from "node:fs";
import { formatTable } from "./table.mjs";

const reportFd = process.env.BENCH_REPORT_FD ? Number(process.env.BENCH_REPORT_FD) : undefined;
const standaloneRows = [];

/**
 * One measurement. `target` is optional: `{ max: n }` (lower is better) or `{ min: n }`.
 * `digits` is how many decimals to print.
 */
export function report({ name, value, unit = "", target, digits = 1, note }) {
  const row = { name, value, unit, target, digits, note };
  if (reportFd !== undefined) writeSync(reportFd, JSON.stringify({ row }) + "\n");
  else standaloneRows.push(row);
}

/** Progress for the impatient; goes to stderr so it never mixes with results. */
export function progress(message) {
  process.stderr.write(`  … ${message}\n`);
}

if (reportFd === undefined) {
  process.on("exit", () => {
    if (standaloneRows.length > 0) process.stdout.write(formatTable(standaloneRows) + "\n");
  });
}
