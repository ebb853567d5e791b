/**
 * Jobs as the protocol shows them (`compaction/status`), and which running jobs nobody runs
 * any more (marked `interrupted` at start).
 */
import { CompactionResult, type CompactionJob } from "@base-context/protocol";
import {
  currentOwner,
  isThisProcess,
  isOwnerAlive,
  isProcessAlive,
  systemProbe,
  type JobRecord,
  type OwnerProbe,
  type ProcessOwner,
  type StoreOwners,
} from "../sessions/index.js";

export { isProcessAlive };

/**
 * Compactions take seconds to minutes (model timeout 120 s by default, plugin hooks 30 s); a job
 * not updated for this long is abandoned even if its pid now belongs to another live process.
 */
export const ABANDONED_AFTER_MS = 3600_000;

/**
 * How an owner's liveness is probed: the store's owners (processes on this machine for SQLite, a
 * lease across hosts for PostgreSQL: store/store-engine.ts), or for tests a probe or a pid check alone.
 */
export type Liveness = StoreOwners | OwnerProbe | ((pid: number) => boolean);

function asOwners(liveness: Liveness): StoreOwners {
  if ("isSelf" in liveness) return liveness;
  const probe = typeof liveness === "function" ? { exists: liveness, startOf: () => null } : liveness;
  return {
    current: currentOwner,
    isSelf: isThisProcess,
    isAlive: (owner) => isOwnerAlive(owner, probe),
  };
}

const ownerOf = (job: JobRecord): ProcessOwner => ({ pid: job.ownerPid, start: job.ownerStart });

/**
 * At start: a running job is abandoned when its daemon is gone, when it is this daemon's (a
 * daemon that is just starting runs nothing yet), or when it has not moved for ABANDONED_AFTER_MS.
 * Several daemons may share one database: a live daemon's running job is left alone.
 */
export function isAbandoned(job: JobRecord, nowMs: number, liveness: Liveness = systemProbe): boolean {
  if (asOwners(liveness).isSelf(ownerOf(job))) return true;
  return isGoneElsewhere(job, nowMs, liveness);
}

/**
 * While running (`compaction/status`): a running job of another daemon is abandoned when that
 * daemon is gone or the job has not moved for ABANDONED_AFTER_MS. This daemon's own running
 * jobs are running.
 */
export function isGoneElsewhere(job: JobRecord, nowMs: number, liveness: Liveness = systemProbe): boolean {
  const owners = asOwners(liveness);
  if (owners.isSelf(ownerOf(job))) return false;
  if (nowMs - job.updatedMs > ABANDONED_AFTER_MS) return true;
  return !owners.isAlive(ownerOf(job));
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
