/**
 * What Linux says about a running process (/proc/<pid>): resident memory, CPU time, threads.
 * Tests use it to check bounds on a daemon they started (memory under a slow client, CPU and
 * threads after a plugin storm) without trusting the daemon's own report.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Resident set size in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!line) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line[1]) * 1024;
}

/** The highest VmRSS the process has had (VmHWM), in bytes. */
export function peakRssBytes(pid: number): number {
  const line = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!line) throw new Error(`no VmHWM for process ${pid}`);
  return Number(line[1]) * 1024;
}

/** User + system CPU time of every thread of the process so far, in clock ticks (/proc/<pid>/stat fields 14 and 15). */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** Clock ticks per second (USER_HZ): 100 on every Linux this runs on. */
export const TICKS_PER_SECOND = 100;

/** Threads of the process (/proc/<pid>/task). */
export function threadCount(pid: number): number {
  return readdirSync(`/proc/${pid}/task`).length;
}

/**
 * Resolves once the process has used less than `maxTicks` of CPU over `windowMs` (it has settled),
 * checking window after window up to `timeoutMs`; returns the ticks of the last window.
 */
export async function whenSettled(pid: number, options: { windowMs: number; maxTicks: number; timeoutMs: number }): Promise<number> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const before = cpuTicks(pid);
    await new Promise((resolve) => setTimeout(resolve, options.windowMs));
    const used = cpuTicks(pid) - before;
    if (used < options.maxTicks) return used;
    if (Date.now() > deadline) throw new Error(`process ${pid} still busy after ${options.timeoutMs} ms (${used} ticks in the last window)`);
  }
}
