/**
 * What the world learns about one run, kept in one place so every ending reports the same way:
 * the job row (durable), `compaction/didStart` / `compaction/didEnd` notifications, and
 * `$/progress` for the run's `workDoneToken` (LSP WorkDoneProgress: begin → report* → end).
 */
import {
  CompactionDidEnd,
  CompactionDidStart,
  type CompactionProgress,
  type CompactionReason,
  type CompactionResult,
  type NotificationDecl,
} from "@base-context/protocol";
import type { z } from "zod";
import { CancelledError } from "../errors.js";
import { log } from "../log.js";
import type { CompactionJobs, JobState, JobUpdate } from "../sessions/index.js";
import type { ClientModel } from "../summarizer/index.js";

/**
 * How a run talks back to its caller. The server's RequestContext fits as is; in-process callers
 * (the CLI, turn/end) pass what they need, or nothing.
 */
export interface CompactionRunContext {
  /** Aborts the run (a `$/cancelRequest`): nothing is written, the run rejects with CancelledError. */
  readonly signal?: AbortSignal | undefined;
  /** The model of the client that asked, when it offers one: `auto` writes the summary with it. */
  readonly clientModel?: ClientModel | undefined;
  /** Sends `$/progress` for `workDoneToken` (a no-op for an undefined token). */
  progress?(token: string | number | undefined, value: CompactionProgress): void;
  notify?<P extends z.ZodType>(decl: NotificationDecl<string, P>, params: z.input<P>): void;
}

export interface RunIdentity {
  readonly sessionId: string;
  readonly reason: z.infer<typeof CompactionReason>;
  readonly requestId?: string | undefined;
  readonly workDoneToken?: string | number | undefined;
}

export interface ReporterDeps {
  readonly jobs: CompactionJobs;
  readonly now: () => number;
  readonly newJobId: () => string;
}

const FINAL_STATE: Record<CompactionResult["status"], JobState> = {
  committed: "committed",
  nothing_to_compact: "nothing",
  cancelled: "cancelled",
  stale: "stale",
  disabled: "disabled",
};

export class RunReporter {
  readonly startedMs: number;
  private jobId: string | undefined;

  constructor(
    private readonly deps: ReporterDeps,
    private readonly run: RunIdentity,
    private readonly ctx: CompactionRunContext,
  ) {
    this.startedMs = deps.now();
  }

  get job(): string | undefined {
    return this.jobId;
  }

  elapsedMs(): number {
    return Math.max(0, Math.round(this.deps.now() - this.startedMs));
  }

  begin(): void {
    this.ctx.notify?.(CompactionDidStart, { sessionId: this.run.sessionId, reason: this.run.reason });
    this.progress({
      kind: "begin",
      title: "Compacting session",
      cancellable: true,
      message: `${this.run.reason} compaction`,
      percentage: 0,
    });
  }

  report(message: string, percentage: number): void {
    this.progress({ kind: "report", message, percentage });
  }

  /** Creates the job row (once the run knows what it would do). */
  createJob(state: JobState, leafId?: string): string {
    const id = this.deps.newJobId();
    this.deps.jobs.insert({
      id,
      sessionId: this.run.sessionId,
      requestId: this.run.requestId,
      reason: this.run.reason,
      state,
      leafId,
      ownerPid: this.deps.jobs.owners.current().pid,
      ownerStart: this.deps.jobs.owners.current().start,
      nowMs: this.deps.now(),
    });
    this.jobId = id;
    return id;
  }

  setState(state: JobState, fields: Omit<JobUpdate, "state" | "nowMs"> = {}): void {
    if (this.jobId === undefined) this.createJob(state);
    this.deps.jobs.update(this.jobId!, { state, nowMs: this.deps.now(), ...fields });
  }

  /** The job's final update for a result, as a JobUpdate (so a commit can write it in its own transaction). */
  finalUpdate(result: CompactionResult): JobUpdate {
    return {
      state: FINAL_STATE[result.status],
      nowMs: this.deps.now(),
      summarizer: result.summarizer,
      entryId: result.entry?.id,
      error: result.status === "committed" ? undefined : result.message,
      result,
    };
  }

  /**
   * Notifies the end of a run that produced a result; the job row must already hold it. Never
   * throws: a caller's failing callback must not turn a committed compaction into an error.
   */
  ended(result: CompactionResult): CompactionResult {
    this.safely(() => {
      this.progress({ kind: "end", message: result.message ?? result.status });
      this.ctx.notify?.(CompactionDidEnd, {
        sessionId: this.run.sessionId,
        reason: this.run.reason,
        status: result.status,
        ...(result.entry ? { entryId: result.entry.id } : {}),
      });
    });
    return result;
  }

  /** Records and notifies a run that ended with an error (cancelled, model failure, bug). */
  failed(error: unknown): void {
    const cancelled = error instanceof CancelledError;
    const message = error instanceof Error ? error.message : String(error);
    try {
      if (this.jobId !== undefined) this.setState(cancelled ? "cancelled" : "failed", { error: message });
    } catch {
      // The store may be closing; the error the caller gets matters more than the job row.
    }
    this.safely(() => {
      this.progress({ kind: "end", message: cancelled ? "cancelled" : `failed: ${message}` });
      this.ctx.notify?.(CompactionDidEnd, {
        sessionId: this.run.sessionId,
        reason: this.run.reason,
        status: cancelled ? "cancelled" : "failed",
      });
    });
  }

  private safely(report: () => void): void {
    try {
      report();
    } catch (error) {
      log(
        "warn",
        `compaction of session "${this.run.sessionId}": reporting its end failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private progress(value: CompactionProgress): void {
    if (this.run.workDoneToken !== undefined) this.ctx.progress?.(this.run.workDoneToken, value);
  }
}
