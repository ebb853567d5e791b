/**
 * Compaction jobs: one row per `compaction/run`, so what a run did outlives the daemon that ran
 * it. A retried requestId finds its committed job here; a job still `prepared`/`summarizing`
 * when its process is gone is marked `interrupted` at the next start.
 */
import type { CompactionJobState, CompactionReason } from "@base-context/protocol";
import type { z } from "zod";
import type { StoreOwners } from "./store-engine.js";
import type { SqlStatements } from "./statements.js";

export type JobState = CompactionJobState;
type Reason = z.infer<typeof CompactionReason>;

/** The states a job is still running in. */
export const RUNNING_JOB_STATES: readonly JobState[] = ["prepared", "summarizing"];

export interface NewJob {
  id: string;
  sessionId: string;
  requestId?: string | undefined;
  reason: Reason;
  state: JobState;
  leafId?: string | undefined;
  ownerPid: number;
  /** The owner's start identity (store/owner.ts); null or absent when unknown. */
  ownerStart?: string | null | undefined;
  nowMs: number;
}

/** A state change; fields left undefined keep their stored value. */
export interface JobUpdate {
  state: JobState;
  nowMs: number;
  summarizer?: string | undefined;
  error?: string | undefined;
  entryId?: string | undefined;
  /** Stored as JSON. */
  result?: unknown;
}

export interface JobRecord {
  id: string;
  sessionId: string;
  requestId?: string;
  reason: Reason;
  state: JobState;
  leafId?: string;
  ownerPid: number;
  ownerStart: string | null;
  createdMs: number;
  updatedMs: number;
  endedMs?: number;
  summarizer?: string;
  error?: string;
  entryId?: string;
  result?: unknown;
}

interface JobRow {
  id: string;
  session_id: string;
  request_id: string | null;
  reason: Reason;
  state: JobState;
  leaf_id: string | null;
  owner_pid: number;
  owner_start: string | null;
  created_ms: number;
  updated_ms: number;
  ended_ms: number | null;
  summarizer: string | null;
  error: string | null;
  entry_id: string | null;
  result: string | null;
}

const COLUMNS =
  "id, session_id, request_id, reason, state, leaf_id, owner_pid, owner_start, created_ms, updated_ms, ended_ms, summarizer, error, entry_id, result";
const INSERT = `
  INSERT INTO compaction_jobs (id, session_id, request_id, reason, state, leaf_id, owner_pid, owner_start, created_ms, updated_ms, ended_ms)
  VALUES (@id, @sessionId, @requestId, @reason, @state, @leafId, @ownerPid, @ownerStart, @nowMs, @nowMs, @endedMs)`;
const UPDATE = `
  UPDATE compaction_jobs SET
    state = @state, updated_ms = @nowMs, ended_ms = @endedMs,
    summarizer = coalesce(@summarizer, summarizer), error = coalesce(@error, error),
    entry_id = coalesce(@entryId, entry_id), result = coalesce(@result, result)
  WHERE id = @id AND state <> 'committed'`; // a committed checkpoint is final: no later failure rewrites it
const BY_ID = `SELECT ${COLUMNS} FROM compaction_jobs WHERE id = ?`;
const BY_SESSION = `SELECT ${COLUMNS} FROM compaction_jobs WHERE session_id = ? ORDER BY seq DESC LIMIT ?`;
const BY_REQUEST = `SELECT ${COLUMNS} FROM compaction_jobs WHERE request_id = ? ORDER BY seq DESC LIMIT ?`;
const BY_SESSION_REQUEST = `SELECT ${COLUMNS} FROM compaction_jobs WHERE session_id = ? AND request_id = ? ORDER BY seq DESC LIMIT ?`;
const COMMITTED_FOR_REQUEST = `
  SELECT ${COLUMNS} FROM compaction_jobs
  WHERE session_id = ? AND request_id = ? AND state = 'committed' ORDER BY seq DESC LIMIT 1`;
const RUNNING = `SELECT ${COLUMNS} FROM compaction_jobs WHERE state IN ('prepared', 'summarizing')`;
const MARK_INTERRUPTED = `
  UPDATE compaction_jobs SET state = 'interrupted', updated_ms = ?, ended_ms = ?,
    error = 'the daemon running this compaction ended before it finished'
  WHERE id = ? AND state IN ('prepared', 'summarizing')`;

const isFinal = (state: JobState): boolean => !RUNNING_JOB_STATES.includes(state);

export class CompactionJobs {
  /**
   * @param write runs a write in an IMMEDIATE transaction (nested as a savepoint inside one that is
   *   already open, so a state change can share the transaction of the append it reports).
   */
  constructor(
    private readonly sql: SqlStatements,
    private readonly write: <T>(work: () => T, lockKey?: string) => T,
    /** Who this daemon is as a job's owner, and whether another owner still runs (store/store-engine.ts). */
    readonly owners: StoreOwners,
  ) {}

  insert(job: NewJob): void {
    this.write(() =>
      this.sql.get(INSERT).run({
        ...job,
        requestId: job.requestId ?? null,
        leafId: job.leafId ?? null,
        ownerStart: job.ownerStart ?? null,
        endedMs: isFinal(job.state) ? job.nowMs : null,
      }),
      job.sessionId,
    );
  }

  update(id: string, update: JobUpdate): void {
    this.write(() =>
      this.sql.get(UPDATE).run({
        id,
        state: update.state,
        nowMs: update.nowMs,
        endedMs: isFinal(update.state) ? update.nowMs : null,
        summarizer: update.summarizer ?? null,
        error: update.error ?? null,
        entryId: update.entryId ?? null,
        result: update.result === undefined ? null : JSON.stringify(update.result),
      }),
    );
  }

  get(id: string): JobRecord | undefined {
    const row = this.sql.get<JobRow>(BY_ID).get(id);
    return row && toRecord(row);
  }

  /** The session's latest jobs, newest first. */
  latestForSession(sessionId: string, limit: number): JobRecord[] {
    return this.sql.get<JobRow>(BY_SESSION).all(sessionId, limit).map(toRecord);
  }

  /** Jobs that carried `requestId` (in one session, or in any), newest first. */
  forRequest(requestId: string, sessionId: string | undefined, limit: number): JobRecord[] {
    const rows =
      sessionId === undefined
        ? this.sql.get<JobRow>(BY_REQUEST).all(requestId, limit)
        : this.sql.get<JobRow>(BY_SESSION_REQUEST).all(sessionId, requestId, limit);
    return rows.map(toRecord);
  }

  /** The committed job of a requestId in a session, if any. */
  committedForRequest(sessionId: string, requestId: string): JobRecord | undefined {
    const row = this.sql.get<JobRow>(COMMITTED_FOR_REQUEST).get(sessionId, requestId);
    return row && toRecord(row);
  }

  /**
   * Marks running jobs whose owner is gone as `interrupted`; returns how many.
   * @param abandoned decides per job (its owner pid and last update) whether nobody runs it any more.
   */
  markInterrupted(abandoned: (job: JobRecord) => boolean, nowMs: number): number {
    return this.write(() => {
      let marked = 0;
      for (const row of this.sql.get<JobRow>(RUNNING).all()) {
        if (!abandoned(toRecord(row))) continue;
        marked += this.sql.get(MARK_INTERRUPTED).run(nowMs, nowMs, row.id).changes;
      }
      return marked;
    });
  }
}

function toRecord(row: JobRow): JobRecord {
  const record: JobRecord = {
    id: row.id,
    sessionId: row.session_id,
    reason: row.reason,
    state: row.state,
    ownerPid: row.owner_pid,
    ownerStart: row.owner_start,
    createdMs: row.created_ms,
    updatedMs: row.updated_ms,
  };
  if (row.request_id !== null) record.requestId = row.request_id;
  if (row.leaf_id !== null) record.leafId = row.leaf_id;
  if (row.ended_ms !== null) record.endedMs = row.ended_ms;
  if (row.summarizer !== null) record.summarizer = row.summarizer;
  if (row.error !== null) record.error = row.error;
  if (row.entry_id !== null) record.entryId = row.entry_id;
  if (row.result !== null) record.result = JSON.parse(row.result) as unknown;
  return record;
}
