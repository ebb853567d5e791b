/**
 * Which process owns a running import or compaction job, told apart from a later process that
 * got the same pid. A pid alone is not enough: pids are reused, and a crashed daemon's import
 * must not stay "owned" by whatever process now has its number. The process's start identity
 * (the boot id and the start time in clock ticks since boot, from /proc on Linux) is recorded
 * with the pid; an owner is alive when a process with that pid exists AND, where the identity
 * can be read, it is the same one. Where /proc is missing the pid alone decides.
 */
import { readFileSync } from "node:fs";

export interface ProcessOwner {
  pid: number;
  /** The process's start identity; null when it cannot be read (not Linux, or recorded by an older daemon). */
  start: string | null;
}

/** How owner liveness is probed (tests replace it). */
export interface OwnerProbe {
  /** True when a process with this pid exists on this machine. */
  exists(pid: number): boolean;
  /** The start identity of the process with this pid now, or null when it cannot be read. */
  startOf(pid: number): string | null;
  /**
   * Decides for a whole owner when the pid and start identity are not how it is known (on
   * PostgreSQL the start names a lease held across hosts, store/postgres/lease.ts).
   */
  isAlive?(owner: ProcessOwner): boolean;
}

/** True when the process with this pid exists (EPERM: it exists but belongs to another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

let bootId: string | null | undefined;

/** Boot id + start time of `pid` (field 22 of /proc/<pid>/stat), or null. */
export function processStartIdentity(pid: number): string | null {
  try {
    bootId ??= readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: count after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const startTicks = fields[19];
    return startTicks ? `${bootId}:${startTicks}` : null;
  } catch {
    return null;
  }
}

export const systemProbe: OwnerProbe = { exists: isProcessAlive, startOf: processStartIdentity };

let self: ProcessOwner | undefined;

/** This process as an owner. */
export function currentOwner(): ProcessOwner {
  if (!self || self.pid !== process.pid) self = { pid: process.pid, start: processStartIdentity(process.pid) };
  return self;
}

/** Whether the recorded owner is still running: the pid exists and, where known, is the same process. */
export function isOwnerAlive(owner: ProcessOwner, probe: OwnerProbe = systemProbe): boolean {
  if (probe.isAlive) return probe.isAlive(owner);
  if (!probe.exists(owner.pid)) return false;
  if (owner.start === null) return true;
  const now = probe.startOf(owner.pid);
  return now === null || now === owner.start;
}

/**
 * Whether `owner` is this process: its pid and, where both are known, its start identity. The
 * same pid with another identity is another process (an earlier one whose pid was reused, or a
 * daemon on another host sharing a PostgreSQL store, whose owner names its lease).
 */
export function isThisProcess(owner: ProcessOwner): boolean {
  if (owner.pid !== process.pid) return false;
  return owner.start === null || owner.start === currentOwner().start;
}
