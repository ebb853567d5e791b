/**
 * The reads and the one write a turn boundary starts with: store the turn's reply (idempotently,
 * under a key derived from the turn/end requestId), then read what `planTurnEnd` decides from —
 * the path up to that reply, the model the session was on before it, and which compactions on
 * the path were overflow recoveries.
 */
import type { AssistantMessage, CompactionEntry, Settings } from "@base-context/protocol";
import { modelInForce, type CountedEntry, type ModelRef } from "@base-context/core";
import type { SessionService } from "../sessions/index.js";
import type { TurnEndFacts } from "./turn-end-plan.js";
import { findTurnReply, type TurnReply } from "./turn-end-reply.js";

/** request_results method of the reply's append, kept apart from turn/end's own result. */
export const REPLY_APPEND_METHOD = "turn/end:assistant";

/**
 * How many of a session's latest compaction jobs are searched for the one that wrote a
 * compaction: only compactions since the last new input matter, a handful of jobs at most.
 */
const RECENT_JOBS = 50;

export interface RecordedReply extends TurnReply {
  /** True when turn/end stored the reply (now, or in an earlier attempt with the same requestId). */
  readonly appended: boolean;
  readonly counted: CountedEntry;
  readonly parentId: string | null;
}

export interface TurnEndFactsInput {
  readonly sessionId: string;
  readonly contextWindow: number;
  readonly assistant?: AssistantMessage | undefined;
  /** The key the reply's append is recorded under, so a retry does not store it twice. */
  readonly replyRequestId: string;
  readonly settings: Settings;
}

export interface GatheredFacts {
  readonly facts: TurnEndFacts;
  readonly reply?: RecordedReply | undefined;
}

export async function gatherTurnEndFacts(sessions: SessionService, input: TurnEndFactsInput): Promise<GatheredFacts> {
  const { sessionId } = input;
  const isOverflowCompaction = overflowCompactionsOf(sessions, sessionId);
  const base = { contextWindow: input.contextWindow, settings: input.settings, isOverflowCompaction };

  if (input.assistant) {
    const reply = await appendReply(sessions, sessionId, input.assistant, input.replyRequestId);
    const before = await sessions.getContextPath(sessionId, reply.parentId);
    const path = [...before.entries, reply.counted];
    return { reply, facts: { ...base, path, reply, sessionModel: modelOf(before) } };
  }

  // The client stored the reply itself (as pi does on message_end): find it at the end of the path.
  const leafPath = await sessions.getContextPath(sessionId);
  const found = findTurnReply(leafPath.entries);
  if (!found) return { facts: { ...base, path: leafPath.entries } };
  const item = leafPath.entries.find((counted) => counted.entry.id === found.entryId)!;
  const parentId = item.entry.parentId;
  const reply: RecordedReply = { ...found, appended: false, counted: item, parentId };
  const before = await sessions.getContextPath(sessionId, parentId);
  return { reply, facts: { ...base, path: leafPath.entries, reply, sessionModel: modelOf(before) } };
}

async function appendReply(
  sessions: SessionService,
  sessionId: string,
  message: AssistantMessage,
  requestId: string,
): Promise<RecordedReply> {
  const outcome = await sessions.appendEntries({
    sessionId,
    entries: [{ type: "message", message }],
    request: { id: requestId, method: REPLY_APPEND_METHOD },
  });
  const counted = outcome.entries[0]!;
  const { entry } = counted;
  if (entry.type !== "message" || entry.message.role !== "assistant") {
    throw new Error(`the stored reply of this turn/end requestId is a ${entry.type} entry, not an assistant message`);
  }
  return { entryId: entry.id, message: entry.message, appended: true, counted, parentId: entry.parentId };
}

/** The model in force on a context path (the same rule context/build reports it with). */
function modelOf(path: Awaited<ReturnType<SessionService["getContextPath"]>>): ModelRef | undefined {
  return modelInForce({
    path: path.entries,
    ...(path.modelChange ? { latestModelChange: path.modelChange } : {}),
    ...(path.modelEntry ? { latestModelEntry: path.modelEntry } : {}),
  });
}

/**
 * Which compaction entries were written by an overflow run: the job that committed an entry
 * records the run's reason (the entry itself does not), and jobs are as durable as the entries.
 * A job's entry id is written by its commit only, whatever state the job ended in.
 */
function overflowCompactionsOf(sessions: SessionService, sessionId: string): (entry: CompactionEntry) => boolean {
  let ids: Set<string> | undefined;
  return (entry) => {
    ids ??= new Set(
      sessions.records.jobs
        .latestForSession(sessionId, RECENT_JOBS)
        .filter((job) => job.reason === "overflow" && job.entryId !== undefined)
        .map((job) => job.entryId!),
    );
    return ids.has(entry.id);
  };
}
