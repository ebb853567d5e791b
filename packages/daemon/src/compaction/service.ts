/**
 * CompactionService: `compaction/prepare`, `compaction/run` and `compaction/status`
 * (docs/design.md#compaction, docs/protocol.md). The rules live in @base-context/core; this layer adds settings per session,
 * idempotency by requestId, one run per session at a time, durable jobs, and the commit.
 *
 * Runs of one session never overlap in this process: a second run is refused with
 * `session_busy` (see SessionLocks), except a retry of the run in flight (same requestId), which
 * joins it and gets its result.
 */
import type {
  CompactionJob,
  CompactionResult,
  CompactionSettings,
  Settings,
} from "@base-context/protocol";
import { prepareCompaction, type PrepareCompactionResult } from "@base-context/core";
import { log } from "../log.js";
import type { SessionSettings } from "../settings/session-settings.js";
import { RUNNING_JOB_STATES, type JobRecord, type SessionRecords, type SessionService } from "../sessions/index.js";
import { createSummarizer, type ClientModel, type Summarizer } from "../summarizer/index.js";
import type { CompactHooks } from "../hooks/compact-hooks.js";
import { InFlightRequests } from "./in-flight.js";
import { isAbandoned, isGoneElsewhere, storedResult, toProtocolJob, type Liveness } from "./jobs.js";
import { runCompaction, type CompactionRunParams } from "./pipeline.js";
import { RunReporter, type CompactionRunContext } from "./reporter.js";
import { SessionLocks } from "../sessions/session-locks.js";
import { preparationPath } from "./retention.js";
import { compactionDisabledReason, requestSettings } from "./settings.js";

export interface CompactionServiceOptions {
  readonly sessions: SessionService;
  readonly settings: SessionSettings;
  /** `session_before_compact` (the plugin host's). */
  readonly hooks?: CompactHooks | undefined;
  /** Where the summarizer comes from (default: `createSummarizer(settings, env, { clientModel })`). */
  summarizerFor?(settings: Settings["summarizer"], clientModel: ClientModel | undefined): Summarizer;
  /** For the default summarizer: where the API key variable is read. */
  readonly env?: NodeJS.ProcessEnv;
  /** Shared with other long operations (tree navigation) so they exclude each other. */
  readonly locks?: SessionLocks;
  readonly now?: () => number;
  readonly newJobId?: () => string;
}

/** The `compaction/status` query. */
export interface JobQuery {
  sessionId?: string | undefined;
  requestId?: string | undefined;
  limit?: number | undefined;
}

const DEFAULT_STATUS_LIMIT = 10;

export class CompactionService {
  readonly locks: SessionLocks;
  private readonly sessions: SessionService;
  private readonly records: SessionRecords;
  private readonly hooks: CompactHooks | undefined;
  private readonly summarizerFor: (settings: Settings["summarizer"], clientModel: ClientModel | undefined) => Summarizer;
  private readonly now: () => number;
  private readonly newJobId: () => string;
  /** Runs in flight that carry a requestId: a retry joins the first instead of being refused. */
  private readonly inFlight = new InFlightRequests<CompactionResult>();

  constructor(private readonly options: CompactionServiceOptions) {
    this.sessions = options.sessions;
    this.records = options.sessions.records;
    this.hooks = options.hooks;
    this.locks = options.locks ?? new SessionLocks();
    const env = options.env ?? process.env;
    this.summarizerFor = options.summarizerFor ?? ((settings, clientModel) => createSummarizer(settings, env, { clientModel }));
    this.now = options.now ?? Date.now;
    this.newJobId = options.newJobId ?? (() => globalThis.crypto.randomUUID());
  }

  /**
   * The dry run: what `run` would summarize and keep, with the session's settings and these
   * overrides. Reads only the path from the latest compaction's first kept entry on (the range
   * prepareCompaction works on, and all its token estimate and file lists need).
   */
  async prepare(sessionId: string, overrides?: Partial<CompactionSettings>, contextWindow?: number): Promise<PrepareCompactionResult> {
    const { settings, compaction, keepAtLeastBudget } = requestSettings(this.options.settings.forSession(sessionId), {
      sources: this.options.settings.sourcesFor?.(sessionId),
      overrides,
      contextWindow,
    });
    const disabled = compactionDisabledReason(settings.context.mode, compaction, "manual");
    if (disabled !== undefined) return { nothing: disabled };
    const path = await this.sessions.getContextPath(sessionId);
    // As `run` summarizes: with the kept tail's large tool outputs hidden when pruning is on.
    const prune = settings.compaction.prune;
    const pruning = prune.enabled ? { pruneMinTokens: prune.minTokens } : {};
    return prepareCompaction(await preparationPath(this.sessions, sessionId, path), compaction, { ...pruning, keepAtLeastBudget });
  }

  /**
   * Compacts a session now. Resolves with the outcome (committed, nothing_to_compact, cancelled
   * by a plugin, stale, disabled); rejects with CancelledError when `ctx.signal` aborts,
   * RequestFailedError when the model fails without fallback, AppError `session_busy` when
   * another compaction of the session is running, `session_not_found`, `request_id_conflict`.
   * A requestId already committed returns the stored result without summarizing again.
   */
  async run(params: CompactionRunParams, ctx: CompactionRunContext = {}): Promise<CompactionResult> {
    const { sessionId, requestId } = params;
    this.records.requireSession(sessionId);
    if (requestId !== undefined) {
      const committed = this.committedResult(sessionId, requestId);
      if (committed) return committed;
      const joined = this.inFlight.get(sessionId, requestId, ctx.signal);
      if (joined) return joined;
    }

    const release = this.locks.acquire(sessionId, "compaction");
    const reporter = new RunReporter(
      { jobs: this.records.jobs, now: this.now, newJobId: this.newJobId },
      { sessionId, reason: params.reason, requestId, workDoneToken: params.workDoneToken },
      ctx,
    );
    const deps = {
      sessions: this.sessions,
      records: this.records,
      settings: this.options.settings,
      summarizerFor: this.summarizerFor,
      hooks: this.hooks,
    };
    const running = runCompaction(deps, params, reporter, { signal: ctx.signal, clientModel: ctx.clientModel });
    running.then(release, release);
    return requestId === undefined ? running : this.inFlight.track(sessionId, requestId, running);
  }

  /** `compaction/status`: the latest jobs of a session, or those that carried a requestId. */
  status(query: JobQuery, liveness?: Liveness): { jobs: CompactionJob[] } {
    const limit = query.limit ?? DEFAULT_STATUS_LIMIT;
    let read: () => JobRecord[];
    if (query.requestId !== undefined) {
      if (query.sessionId !== undefined) this.records.requireSession(query.sessionId);
      read = () => this.records.jobs.forRequest(query.requestId!, query.sessionId, limit);
    } else {
      if (query.sessionId === undefined) return { jobs: [] };
      this.records.requireSession(query.sessionId);
      read = () => this.records.jobs.latestForSession(query.sessionId!, limit);
    }
    let jobs = read();
    // A job another daemon was running when it died would otherwise read "summarizing" until
    // this daemon restarts: its owner is checked now, and the job marked interrupted.
    const now = this.now();
    const owners = liveness ?? this.records.jobs.owners;
    const gone = new Set(
      jobs.filter((job) => RUNNING_JOB_STATES.includes(job.state) && isGoneElsewhere(job, now, owners)).map((job) => job.id),
    );
    if (gone.size > 0 && this.records.jobs.markInterrupted((job) => gone.has(job.id), now) > 0) jobs = read();
    return { jobs: jobs.map(toProtocolJob) };
  }

  /**
   * Marks the jobs a previous daemon left running as `interrupted` (call once at start). Jobs of
   * another live daemon sharing the database are left alone.
   */
  markInterruptedJobs(alive?: Liveness): number {
    const now = this.now();
    const marked = this.records.jobs.markInterrupted((job) => isAbandoned(job, now, alive ?? this.records.jobs.owners), now);
    if (marked > 0) log("warn", `${marked} compaction job(s) were left unfinished by a daemon that ended; marked interrupted`);
    return marked;
  }

  /** The stored reply of a committed run with this requestId (request_id_conflict if another method used it). */
  private committedResult(sessionId: string, requestId: string): CompactionResult | undefined {
    // Called for its check only: a requestId another method already used is refused
    // (request_id_conflict) before anything runs. A compaction's own answer is its committed job.
    this.records.findRequestResult(sessionId, requestId, "compaction/run");
    const job = this.records.jobs.committedForRequest(sessionId, requestId);
    return job ? storedResult(job) : undefined;
  }
}
