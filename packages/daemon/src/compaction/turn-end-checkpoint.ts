/**
 * Running the compaction a turn boundary planned, through the compaction service (its lock,
 * jobs and requestId idempotency), and saying exactly what happened — including the case
 * docs/design.md#follow-up insists on: a checkpoint that committed and then something failed. The job row written
 * in the commit's transaction is the proof of a commit, not the reply of `run` (it can be lost).
 *
 * An overflow compaction must not keep the failed reply in the context it rebuilds: the reply
 * stays stored, set aside on a branch of its own (the leaf moves back to its parent before the
 * compaction, so the compaction becomes its sibling). Should the compaction not commit, the leaf
 * goes back to the reply, which is then the session's record of the failed turn.
 */
import type { CompactionResult } from "@base-context/protocol";
import { CancelledError } from "../errors.js";
import type { SessionRecords } from "../sessions/index.js";
import { storedResult } from "./jobs.js";
import type { CompactionRunParams } from "./pipeline.js";
import type { CompactionRunContext } from "./reporter.js";

/** Runs of one requestId: the first, and a few retries that joined or replayed it. */
const RUNS_PER_REQUEST = 10;

/** What turn/end needs of the compaction service. */
export interface TurnEndCompaction {
  run(params: CompactionRunParams, ctx?: CompactionRunContext): Promise<CompactionResult>;
  readonly locks: { holder(sessionId: string): string | undefined };
}

export interface CheckpointRequest {
  readonly sessionId: string;
  readonly reason: "threshold" | "overflow";
  /** Derived from the turn/end requestId, so a retried turn/end finds the same run. */
  readonly requestId: string;
  /** The failed reply to set aside (overflow). */
  readonly failedEntryId?: string | undefined;
  readonly workDoneToken?: string | number | undefined;
  /** The turn's context window: the threshold `auto` compares against. */
  readonly contextWindow: number;
}

export type CheckpointOutcome =
  | { readonly kind: "committed"; readonly result: CompactionResult }
  /** The run ended without writing: nothing to compact, stale, cancelled by a plugin, disabled. */
  | { readonly kind: "not_committed"; readonly result: CompactionResult }
  /** The run failed before committing (e.g. the model failed and fallback is off). */
  | { readonly kind: "failed"; readonly error: string }
  /** Another long operation holds the session; nothing was tried. */
  | { readonly kind: "busy"; readonly holder: string }
  /** The checkpoint committed, then the run (or an earlier attempt of this turn/end) failed. */
  | { readonly kind: "failed_after_commit"; readonly result: CompactionResult; readonly error: string };

export async function runCheckpoint(
  records: SessionRecords,
  compaction: TurnEndCompaction,
  request: CheckpointRequest,
  ctx: CompactionRunContext,
): Promise<CheckpointOutcome> {
  const { sessionId, requestId } = request;
  // A commit under this requestId without a stored turn/end answer: the earlier attempt died after it.
  const earlier = committedResult(records, sessionId, requestId);
  if (earlier) {
    return {
      kind: "failed_after_commit",
      result: earlier,
      error: "an earlier attempt of this turn/end committed the checkpoint and did not finish",
    };
  }
  const holder = compaction.locks.holder(sessionId);
  if (holder !== undefined) return { kind: "busy", holder };

  // From here to `run` taking the lock nothing awaits: no other operation can slip in between.
  const setAside = request.failedEntryId !== undefined ? setReplyAside(records, sessionId, request.failedEntryId) : undefined;
  const watched = watchNotifications(ctx);
  let result: CompactionResult;
  try {
    // `auto` with the turn's window: the cheap prune rung when it alone is enough (docs/compaction-rungs.md).
    const params: CompactionRunParams = {
      sessionId,
      reason: request.reason,
      requestId,
      strategy: "auto",
      contextWindow: request.contextWindow,
    };
    if (request.workDoneToken !== undefined) params.workDoneToken = request.workDoneToken;
    result = await compaction.run(params, watched.ctx);
  } catch (error) {
    const committed = committedResult(records, sessionId, requestId);
    if (committed) return { kind: "failed_after_commit", result: committed, error: errorMessage(error) };
    setAside?.restore();
    if (error instanceof CancelledError) throw error;
    return { kind: "failed", error: errorMessage(error) };
  }
  if (result.status === "committed") {
    const failure = watched.failure();
    return failure === undefined ? { kind: "committed", result } : { kind: "failed_after_commit", result, error: failure };
  }
  setAside?.restore();
  return { kind: "not_committed", result };
}

/**
 * The result of a run of `requestId` that committed its entry. The job's entry id is written in
 * the commit's transaction and kept whatever the job's state says afterwards (a failure after the
 * commit may mark the job failed), so it is the proof that the checkpoint exists.
 */
function committedResult(records: SessionRecords, sessionId: string, requestId: string): CompactionResult | undefined {
  const job = records.jobs.forRequest(requestId, sessionId, RUNS_PER_REQUEST).find((candidate) => candidate.entryId !== undefined);
  if (!job) return undefined;
  const stored = storedResult(job);
  if (stored?.status === "committed") return stored;
  const entry = records.getEntry(sessionId, job.entryId!)?.entry;
  return entry ? { status: "committed", entry, jobId: job.id } : undefined;
}

/**
 * Moves the leaf from the failed reply back to its parent, when the reply is the leaf (a reply
 * with entries after it stays on the path: moving away would drop those entries from it).
 */
function setReplyAside(records: SessionRecords, sessionId: string, replyId: string): { restore(): void } | undefined {
  const { leafId } = records.requireSession(sessionId);
  const parentId = records.getEntry(sessionId, replyId)?.entry.parentId ?? null;
  // At the parent already: an earlier attempt of this turn/end set it aside and died before compacting.
  if (leafId !== replyId && leafId !== parentId) return undefined;
  if (leafId === replyId) records.setLeaf(sessionId, parentId);
  return {
    // Only when nothing moved the leaf meanwhile: a newer leaf is someone else's decision.
    restore: () => {
      if (records.requireSession(sessionId).leafId === parentId) records.setLeaf(sessionId, replyId);
    },
  };
}

/**
 * The caller's context, noting when telling the client failed: the compaction service logs such
 * a failure and still reports the commit, but the client missed part of it, so turn/end must not
 * resume on its own (docs/design.md#follow-up: a checkpoint followed by a failure is no reason to auto-resume).
 */
function watchNotifications(ctx: CompactionRunContext): { ctx: CompactionRunContext; failure(): string | undefined } {
  let failure: string | undefined;
  const { notify } = ctx;
  if (!notify) return { ctx, failure: () => undefined };
  const watched: CompactionRunContext = {
    ...ctx,
    notify: (decl, params) => {
      try {
        notify(decl, params);
      } catch (error) {
        failure ??= `sending ${decl.method} failed: ${errorMessage(error)}`;
        throw error;
      }
    },
  };
  return { ctx: watched, failure: () => failure };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
