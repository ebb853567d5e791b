/**
 * Jobs as the protocol shows them (`compaction/status`), and which running jobs nobody runs
 * any more (marked `interrupted` at start).
 */
import { CompactionResult, type CompactionJob } from "@base-context/protocol";
import { isOwnerAlive, isProcessAlive, systemProbe, type JobRecord, type OwnerProbe } from "../sessions/index.js";

export { isProcessAlive };

/**
 * Compactions take seconds to minutes (model timeout 120 s by default, plugin hooks 30 s); a job
 * not updated for this long is abandoned even if its pid now belongs to another live process.
 */
export const ABANDONED_AFTER_MS = 3600_000;

/** How an owner's liveness is probed: a full probe (pid + start identity), or a pid check alone. */
export type Liveness = OwnerProbe | ((pid: number) => boolean);

/** Whether the process that owns `job` still runs (a reused pid is another process: not the owner). */
export function isOwnerRunning(job: JobRecord, liveness: Liveness = systemProbe): boolean {
  const probe = typeof liveness === "function" ? { exists: liveness, startOf: () => null } : liveness;
  return isOwnerAlive({ pid: job.ownerPid, start: job.ownerStart }, probe);
}

/**
 * At start: a running job is abandoned when its process is gone, when it is this process's (a
 * daemon that is just starting runs nothing yet), or when it has not moved for ABANDONED_AFTER_MS.
 * Several daemons may share one database: a live daemon's running job is left alone.
 */
export function isAbandoned(job: JobRecord, nowMs: number, liveness: Liveness = systemProbe): boolean {
  if (job.ownerPid === process.pid) return true;
  return isGoneElsewhere(job, nowMs, liveness);
}

/**
 * While running (`compaction/status`): a running job of another process is abandoned when that
 * process is gone or the job has not moved for ABANDONED_AFTER_MS. This process's own running
 * jobs are running.
 */
export function isGoneElsewhere(job: JobRecord, nowMs: number, liveness: Liveness = systemProbe): boolean {
  if (job.ownerPid === process.pid) return false;
  if (nowMs - job.updatedMs > ABANDONED_AFTER_MS) return true;
  return !isOwnerRunning(job, liveness);
}

export function toProtocolJob(record: JobRecord): CompactionJob {
  const iso = (ms: number) => new Date(ms).toISOString();
  const job: CompactionJob = {
    id: record.id,
    sessionId: record.sessionId,
    reason: record.reason,
    state: record.state,
    createdAt: iso(record.createdMs),
    updatedAt: iso(record.updatedMs),
  };
  if (record.requestId !== undefined) job.requestId = record.requestId;
  if (record.leafId !== undefined) job.leafId = record.leafId;
  if (record.endedMs !== undefined) {
    job.endedAt = iso(record.endedMs);
    job.durationMs = Math.max(0, record.endedMs - record.createdMs);
  }
  if (record.summarizer !== undefined) job.summarizer = record.summarizer;
  if (record.error !== undefined) job.error = record.error;
  if (record.entryId !== undefined) job.entryId = record.entryId;
  const result = storedResult(record);
  if (result) job.result = result;
  return job;
}

/** The reply a job stored, if it is still readable as one. */
export function storedResult(record: JobRecord): CompactionResult | undefined {
  const parsed = CompactionResult.safeParse(record.result);
  return parsed.success ? parsed.data : undefined;
}
