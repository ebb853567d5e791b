// Preloaded into every bench process by bench/run.mjs (`node --import`): reports the process's
// own peak resident set size when it exits, so each bench's memory is measured on its own.
import { writeSync } from "node:fs";

const reportFd = Number(process.env.BENCH_REPORT_FD);
process.on("exit", () => {
  const peakMB = process.resourceUsage().maxRSS / 1024; // maxRSS is in KiB
  writeSync(reportFd, JSON.stringify({ peakRssMB: peakMB }) + "\n");
});
