/**
 * Jobs as the protocol shows them (`compaction/status`), and which running jobs nobody runs
 * any more (marked `interrupted` at start).
 */
import { CompactionResult, type CompactionJob } from "@base-context/protocol";
import type { JobRecord } from "../store/index.js";

/**
 * Compactions take seconds to minutes (model timeout 120 s by default, plugin hooks 30 s); a job
 * not updated for this long is abandoned even if its pid now belongs to another live process.
 */
export const ABANDONED_AFTER_MS = 3600_000;

/** True when the process with this pid exists (on this machine). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A running job is abandoned when its process is gone, when it is this process's (a daemon that
 * is just starting runs nothing yet), or when it has not moved for ABANDONED_AFTER_MS. Several
 * daemons may share one database: a live daemon's running job is left alone.
 */
export function isAbandoned(job: JobRecord, nowMs: number, alive: (pid: number) => boolean = isProcessAlive): boolean {
  if (job.ownerPid === process.pid) return true;
  if (nowMs - job.updatedMs > ABANDONED_AFTER_MS) return true;
  return !alive(job.ownerPid);
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
