/**
 * `turn/end` (docs/design.md#turn-boundaries, docs/protocol.md): the thin decision layer in front of compaction.
 * Stores the turn's reply, decides from the path whether the boundary calls for a threshold or
 * an overflow compaction (turn-end-plan), runs it through the compaction service
 * (turn-end-checkpoint), and answers whether the client should go on (turn-end-follow-up).
 *
 * Idempotency: with a `requestId`, the first answer is stored and a retry gets it back. A retry
 * while the first attempt still runs joins it. The steps inside are keyed by the same requestId
 * (the reply's append, the compaction run), so a retry after a crash neither stores the reply
 * twice nor summarizes twice — and a checkpoint found committed without a stored answer is
 * reported as committed-then-failed, never resumed.
 */
import { TurnEnd, type ValidParamsOf } from "@base-context/protocol";
import { log } from "../log.js";
import type { SessionSettings } from "../settings/session-settings.js";
import { InFlightRequests } from "./in-flight.js";
import type { SessionRecords, SessionService } from "../sessions/index.js";
import type { CompactionRunContext } from "./reporter.js";
import { answerTurnEnd, failedAfterCheckpoint, type TurnEndAnswer } from "./turn-end-answer.js";
import { runCheckpoint, type CheckpointOutcome, type TurnEndCompaction } from "./turn-end-checkpoint.js";
import { gatherTurnEndFacts } from "./turn-end-facts.js";
import { planTurnEnd } from "./turn-end-plan.js";
import { requestSettings } from "./settings.js";

export type TurnEndParams = ValidParamsOf<typeof TurnEnd>;
export type { TurnEndAnswer };

export interface TurnEndServiceOptions {
  readonly sessions: SessionService;
  readonly compaction: TurnEndCompaction;
  readonly settings: SessionSettings;
  /** Keys the steps of a turn/end sent without a requestId. */
  readonly newRequestId?: () => string;
}

export class TurnEndService {
  private readonly records: SessionRecords;
  private readonly newRequestId: () => string;
  /** turn/end calls in flight that carry a requestId: a retry joins the first. */
  private readonly inFlight = new InFlightRequests<TurnEndAnswer>();

  constructor(private readonly options: TurnEndServiceOptions) {
    this.records = options.sessions.records;
    this.newRequestId = options.newRequestId ?? (() => globalThis.crypto.randomUUID());
  }

  async end(params: TurnEndParams, ctx: CompactionRunContext = {}): Promise<TurnEndAnswer> {
    const { sessionId, requestId } = params;
    this.records.requireSession(sessionId);
    if (requestId === undefined) return this.run(params, undefined, ctx);

    const stored = this.storedAnswer(sessionId, requestId);
    if (stored) return stored;
    const joined = this.inFlight.get(sessionId, requestId, ctx.signal);
    if (joined) return joined;
    return this.inFlight.track(sessionId, requestId, this.run(params, requestId, ctx));
  }

  private async run(params: TurnEndParams, requestId: string | undefined, ctx: CompactionRunContext): Promise<TurnEndAnswer> {
    const { sessionId } = params;
    // The keys of the steps inside, derived so a retry of the same turn/end finds them again.
    const base = requestId ?? `turn-end:${this.newRequestId()}`;
    // The sizes the user did not set follow their share of the turn's window.
    const applied = requestSettings(this.options.settings.forSession(sessionId), {
      sources: this.options.settings.sourcesFor?.(sessionId),
      contextWindow: params.contextWindow,
    });
    const { facts, reply } = await gatherTurnEndFacts(this.options.sessions, {
      sessionId,
      contextWindow: params.contextWindow,
      assistant: params.assistant,
      replyRequestId: `${base}#reply`,
      settings: applied.settings,
    });
    const plan = planTurnEnd(facts);

    let checkpoint: CheckpointOutcome | undefined;
    if (plan.action === "compact") {
      checkpoint = await runCheckpoint(
        this.records,
        this.options.compaction,
        {
          sessionId,
          reason: plan.reason,
          requestId: `${base}#checkpoint`,
          failedEntryId: plan.reason === "overflow" ? plan.failedEntryId : undefined,
          workDoneToken: params.workDoneToken,
          contextWindow: params.contextWindow,
        },
        ctx,
      );
    }
    const answer = withConflict(answerTurnEnd(params, plan, checkpoint, reply?.appended ? reply.entryId : undefined), applied.conflict);
    return requestId === undefined ? answer : this.save(sessionId, requestId, answer);
  }

  /**
   * Stores the answer for retries. When that fails after a committed checkpoint, the answer
   * becomes committed-then-failed: a client retrying would otherwise be told to go on by an
   * answer the daemon could not keep.
   */
  private save(sessionId: string, requestId: string, answer: TurnEndAnswer): TurnEndAnswer {
    try {
      this.records.saveRequestResult(sessionId, requestId, TurnEnd.method, answer);
      return answer;
    } catch (error) {
      // Another daemon process sharing the database may have answered the same requestId first.
      const stored = this.storedAnswer(sessionId, requestId);
      if (stored) return stored;
      const failure = `storing the turn/end answer failed: ${error instanceof Error ? error.message : String(error)}`;
      log("warn", `turn/end ${requestId} of session ${sessionId}: ${failure}`);
      const committed = answer.checkpoint?.status === "committed" && answer.failedAfterCheckpoint === undefined;
      return committed ? failedAfterCheckpoint(answer, failure) : answer;
    }
  }

  private storedAnswer(sessionId: string, requestId: string): TurnEndAnswer | undefined {
    const stored = this.records.findRequestResult(sessionId, requestId, TurnEnd.method);
    if (!stored) return undefined;
    const parsed = TurnEnd.result.safeParse(stored.result);
    return parsed.success ? parsed.data : undefined;
  }
}

/** The answer, its message naming settings that cannot fit the window (once: a checkpoint's message may carry it already). */
function withConflict(answer: TurnEndAnswer, conflict: string | undefined): TurnEndAnswer {
  if (conflict === undefined || answer.message?.includes(conflict)) return answer;
  return { ...answer, message: answer.message ? `${answer.message}; ${conflict}` : conflict };
}
