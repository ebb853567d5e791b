/**
 * The daemon's summaries written by this agent's own model: the loop answers the daemon's
 * `model/complete` requests with the model and endpoint it already uses, so compactions and
 * branch summaries need no summarizer settings in the daemon (and no second copy of the key).
 * The daemon falls back to its own summarizer when this fails; the error says whether a retry may
 * help (the HTTP status), and a cancelled request aborts the model call.
 */
import { ErrorCodes, ModelComplete, ResponseError, type BaseContextClient } from "@base-context/protocol";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

export interface SummaryModel {
  readonly openai: OpenAI;
  readonly model: string;
}

/** What was asked, for the log (`purpose` and the answer's size). */
export interface SummaryRequestEvent {
  readonly purpose: string;
  readonly outputTokens?: number | undefined;
  readonly error?: string;
}

/**
 * Registers the answer to `model/complete`. Call it before `initialize`: the client then offers
 * its model there (`capabilities.model.complete`).
 */
export function answerSummaryRequests(
  daemon: BaseContextClient,
  model: SummaryModel,
  onRequest?: (event: SummaryRequestEvent) => void,
): { dispose(): void } {
  return daemon.onRequest(ModelComplete, async (params, signal) => {
    const messages: ChatCompletionMessageParam[] = [];
    if (params.system !== undefined) messages.push({ role: "system", content: params.system });
    for (const message of params.messages) messages.push({ role: message.role, content: message.content });
    try {
      const completion = await model.openai.chat.completions.create(
        { model: model.model, messages, max_tokens: params.maxTokens },
        { signal },
      );
      const text = completion.choices[0]?.message?.content ?? "";
      onRequest?.({ purpose: params.purpose, outputTokens: completion.usage?.completion_tokens });
      return {
        text,
        model: completion.model || model.model,
        ...(completion.usage ? { usage: { input: completion.usage.prompt_tokens, output: completion.usage.completion_tokens } } : {}),
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      onRequest?.({ purpose: params.purpose, error: message });
      // The status tells the daemon whether another attempt may help (429, 5xx) or not (400).
      const status = error instanceof OpenAI.APIError ? error.status : undefined;
      throw new ResponseError(
        ErrorCodes.RequestFailed,
        `the agent's model failed: ${message}`,
        status !== undefined ? { status } : undefined,
      );
    }
  });
}
