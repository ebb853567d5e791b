// Small statistics and process helpers shared by the benches.
import { readFileSync } from "node:fs";

/** The p-th percentile (0–100) of a list of numbers, nearest-rank. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export const median = (values) => percentile(values, 50);

/** Peak and current resident set size of a process in MB, from /proc (Linux only; else undefined). */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
    return { peakMB: kib("VmHWM") / 1024, currentMB: kib("VmRSS") / 1024 };
  } catch {
    return undefined;
  }
}

/** Milliseconds since `start` (a performance.now() reading). */
export const since = (start) => performance.now() - start;

/** Runs `run(i)` `count` times, one after another; the milliseconds each took. */
export async function timeRuns(count, run) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await run(i);
    times.push(since(started));
  }
  return times;
}
