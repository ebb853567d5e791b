/**
 * The agent loop. The daemon owns the conversation; the loop only moves messages between the
 * daemon, the model and the tools, and does what `turn/end` answers:
 *
 *   take a prompt → store it
 *   repeat:
 *     context/build (openai-chat) → model → store the reply → run its tool calls, store each result
 *     turn/end { contextWindow, toolBatch, queuedInputs }   (the daemon may compact here)
 *     followUp "retry"    → the reply was a context overflow and the daemon compacted: call the model again
 *              "continue" → tool results to answer (or queued prompts): call the model again / send the next prompt
 *              "none"     → the turn is over: wait for the next prompt (or stop, when the reply failed)
 *
 * Every reply is stored with `entry/append` as soon as it arrives, tool results after it, and
 * `turn/end` is then called *without* `assistant`: the daemon finds the turn's reply at the end of
 * the path. (Passing `assistant` makes turn/end store the reply itself — it would then be stored
 * twice, and after its own tool results.)
 */
import {
  ContextBuild,
  EntryAppend,
  TurnEnd,
  type AgentMessage,
  type AssistantMessage,
  type BaseContextClient,
  type ResultOf,
  type ToolCall,
  type ToolResultMessage,
} from "@base-context/protocol";
import type OpenAI from "openai";
import type { Inbox } from "./inbox.js";
import { callModel, chatRequestMessages, INVALID_ARGUMENTS } from "./model.js";
import type { Tool } from "./tools.js";

export { Inbox } from "./inbox.js";
export { openSession, type OpenSessionOptions, type OpenedSession } from "./session.js";
export { workspaceTools, MAX_TOOL_OUTPUT_CHARS, type Tool } from "./tools.js";
export { answerSummaryRequests, type SummaryModel, type SummaryRequestEvent } from "./summaries.js";

export type TurnEndAnswer = ResultOf<typeof TurnEnd>;

export const DEFAULT_SYSTEM_PROMPT =
  "You are a careful assistant working in a workspace folder. Use the tools to look at files before answering " +
  "questions about them. Paths are relative to the workspace root. Answer concisely.";

export interface AgentLoopOptions {
  /** An initialized daemon client (`spawnDaemon` + `initialize`). */
  readonly daemon: BaseContextClient;
  readonly sessionId: string;
  readonly openai: OpenAI;
  readonly model: string;
  /** Stored as each reply's `provider` (default "openai-compatible"). */
  readonly provider?: string;
  /** The model's context window in tokens, sent with every `turn/end`. */
  readonly contextWindow: number;
  readonly tools: readonly Tool[];
  readonly systemPrompt?: string;
  /** Model calls for one prompt before the loop gives up (a model that never stops calling tools). */
  readonly maxSteps?: number;
  /** What happened, as it happens (the CLI prints it). */
  readonly onEvent?: (event: AgentEvent) => void;
  /** Stops the loop: the model call in flight is aborted and stored as such. */
  readonly signal?: AbortSignal;
}

export type AgentEvent =
  | { readonly type: "prompt"; readonly text: string; readonly entryId: string }
  /** About to call the model with the context the daemon built (`tokens`: its stored token counts). */
  | {
      readonly type: "request";
      readonly step: number;
      readonly messages: number;
      readonly tokens: number;
      readonly compactionId?: string | undefined;
    }
  | { readonly type: "reply"; readonly message: AssistantMessage; readonly entryId: string }
  | { readonly type: "toolResult"; readonly call: ToolCall; readonly result: ToolResultMessage; readonly entryId: string }
  /** The daemon's answer: `checkpoint` is the compaction it ran (if any), `followUp` what to do next. */
  | { readonly type: "turnEnd"; readonly answer: TurnEndAnswer; readonly queuedInputs: number }
  | { readonly type: "stopped"; readonly reason: string };

export interface AgentLoopResult {
  /** True when no reply failed for good and the loop was not stopped. */
  ok: boolean;
  /** The last reply of the model. */
  lastReply?: AssistantMessage;
  modelCalls: number;
  /** Compactions `turn/end` committed. */
  compactions: number;
  /** Replies that failed without a retry (errors, aborts). */
  failures: number;
  /** Why the loop stopped early, if it did. */
  stoppedBecause?: string;
  /** Prompts never sent because the loop stopped early. */
  unsent: string[];
}

export const DEFAULT_MAX_STEPS = 32;

/** Runs until the inbox is closed and empty, or a turn fails for good, or `signal` aborts. */
export async function runAgentLoop(options: AgentLoopOptions, inbox: Inbox): Promise<AgentLoopResult> {
  const { daemon, sessionId, signal, tools } = options;
  const provider = options.provider ?? "openai-compatible";
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const emit = options.onEvent ?? (() => undefined);
  const result: AgentLoopResult = { ok: true, modelCalls: 0, compactions: 0, failures: 0, unsent: [] };
  const store = async (message: AgentMessage): Promise<string> =>
    (await daemon.request(EntryAppend, { sessionId, entry: { type: "message", message } })).entry.id;
  const stop = (reason: string): AgentLoopResult => {
    emit({ type: "stopped", reason });
    return { ...result, ok: false, stoppedBecause: reason, unsent: inbox.drain() };
  };

  let next: "prompt" | "model" = "prompt";
  let steps = 0;
  for (;;) {
    if (next === "prompt") {
      const text = await inbox.next(signal);
      if (text === undefined) break;
      emit({ type: "prompt", text, entryId: await store({ role: "user", content: text, timestamp: Date.now() }) });
      steps = 0;
    }
    if (signal?.aborted) return stop("aborted");
    if (++steps > maxSteps) return stop(`the model was called ${maxSteps} times for one prompt without finishing`);

    // 1. What the model must see, as the daemon builds it: latest summary, kept tail, newer entries.
    const context = await daemon.request(ContextBuild, { sessionId, format: "openai-chat" });
    const messages = chatRequestMessages(options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT, context.messages);
    emit({ type: "request", step: steps, messages: messages.length, tokens: context.tokens, compactionId: context.compactionId });

    // 2. The model; its reply is stored at once, failed or not (a failure is the daemon's overflow signal).
    const reply = await callModel({ openai: options.openai, model: options.model, provider, messages, tools, signal });
    result.modelCalls++;
    result.lastReply = reply;
    emit({ type: "reply", message: reply, entryId: await store(reply) });

    // 3. Its tool calls, in order; each result is stored right after it ran.
    const calls = reply.content.filter((block): block is ToolCall => block.type === "toolCall");
    for (const call of calls) {
      const toolResult = await runToolCall(tools, call, signal);
      emit({ type: "toolResult", call, result: toolResult, entryId: await store(toolResult) });
    }

    // 4. The turn boundary. None of these tools asks to end the run, so no result terminates.
    const queuedInputs = inbox.size;
    const answer = await daemon.request(TurnEnd, {
      sessionId,
      contextWindow: options.contextWindow,
      ...(calls.length > 0 ? { toolBatch: { results: calls.map(() => ({ terminate: false })) } } : {}),
      queuedInputs,
    });
    if (answer.checkpoint?.status === "committed") result.compactions++;
    emit({ type: "turnEnd", answer, queuedInputs });

    // 5. What the daemon says to do next.
    if (answer.followUp === "retry") {
      // Context overflow, and the daemon compacted (the failed reply is set aside): same step again.
      next = "model";
      continue;
    }
    const failed = reply.stopReason === "error" || reply.stopReason === "aborted";
    if (failed) result.failures++;
    if (answer.followUp === "continue") {
      // Tool results wait for the model; with none, the queued prompts are the new work.
      next = calls.length === 0 && inbox.size > 0 ? "prompt" : "model";
      continue;
    }
    // "none": the turn is over. After a failure nothing resumes by itself, queued prompts included.
    if (reply.stopReason === "aborted") return stop("aborted");
    if (failed)
      return stop(`the model call failed: ${reply.errorMessage ?? "no error message"}${answer.message ? ` (${answer.message})` : ""}`);
    if (answer.failedAfterCheckpoint !== undefined) return stop(`turn/end: ${answer.failedAfterCheckpoint}`);
    next = "prompt";
  }
  return { ...result, ok: result.failures === 0 };
}

async function runToolCall(tools: readonly Tool[], call: ToolCall, signal: AbortSignal | undefined): Promise<ToolResultMessage> {
  let text: string;
  let isError = false;
  try {
    const tool = tools.find((candidate) => candidate.name === call.name);
    if (!tool) throw new Error(`unknown tool "${call.name}" (available: ${tools.map((t) => t.name).join(", ")})`);
    const invalid = call[INVALID_ARGUMENTS];
    if (typeof invalid === "string") throw new Error(`the arguments are not a JSON object: ${invalid.slice(0, 200)}`);
    if (signal?.aborted) throw new Error("aborted before the tool ran");
    text = await tool.run(call.arguments, signal);
  } catch (error) {
    text = error instanceof Error ? error.message : String(error);
    isError = true;
  }
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text }],
    isError,
    timestamp: Date.now(),
  };
}
