/**
 * A summarizer that uses a different OpenAI-compatible model than the daemon's: a cheaper one,
 * a local one (Ollama, vLLM, LM Studio…), or one with a longer context. It writes the same
 * structured summary as the daemon, with the daemon's own prompts (`buildSummaryRequest`).
 *
 * Its own settings, from the environment the daemon was started with:
 *   ALT_SUMMARIZER_MODEL     the model; unset = the plugin stays out of the way
 *   ALT_SUMMARIZER_BASE_URL  the endpoint (default: the OpenAI API)
 *   ALT_SUMMARIZER_API_KEY   its key (local servers usually need none)
 * If the model call fails, the hook throws: the daemon reports it and summarizes as usual.
 */
import OpenAI from "openai";
import {
  buildBranchSummaryRequest,
  buildSummaryRequest,
  definePlugin,
  entryToContextMessage,
  formatFileOps,
  type ContextMessage,
  type SummaryRequest,
} from "@base-context/plugin-sdk";

interface ModelConfig {
  model: string;
  baseURL: string | undefined;
  apiKey: string;
}

/** Read at each call, so a test (or a restarted daemon) can change it. */
function modelConfig(): ModelConfig | undefined {
  const model = process.env.ALT_SUMMARIZER_MODEL?.trim();
  if (!model) return undefined;
  return {
    model,
    baseURL: process.env.ALT_SUMMARIZER_BASE_URL?.trim() || undefined,
    // The client insists on a key; local servers ignore it.
    apiKey: process.env.ALT_SUMMARIZER_API_KEY?.trim() || "unused",
  };
}

async function complete(config: ModelConfig, request: SummaryRequest, signal: AbortSignal): Promise<string> {
  const client = new OpenAI({ apiKey: config.apiKey, baseURL: config.baseURL, maxRetries: 1 });
  const response = await client.chat.completions.create(
    {
      model: config.model,
      max_tokens: request.maxTokens,
      messages: [
        { role: "system", content: request.system },
        { role: "user", content: request.prompt },
      ],
    },
    // The daemon aborts this when it cancels the request or the hook runs out of time.
    { signal },
  );
  const text = response.choices[0]?.message?.content?.trim();
  if (!text) throw new Error(`${config.model} returned no text`);
  return text;
}

const SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n";

export default definePlugin({
  name: "openai-summarizer",
  apiVersion: 1,
  hooks: {
    async session_before_compact(event, ctx) {
      const config = modelConfig();
      if (config === undefined) return undefined;
      const { preparation } = event;
      const reserveTokens = preparation.settings.reserveTokens;

      let summary =
        preparation.messagesToSummarize.length > 0
          ? await complete(
              config,
              buildSummaryRequest({
                kind: "history",
                messages: preparation.messagesToSummarize,
                previousSummary: preparation.previousSummary,
                customInstructions: event.customInstructions,
                reserveTokens,
              }),
              ctx.signal,
            )
          : (preparation.previousSummary ?? "No prior history.");
      if (preparation.isSplitTurn && preparation.turnPrefixMessages.length > 0) {
        const prefix = await complete(
          config,
          buildSummaryRequest({ kind: "turnPrefix", messages: preparation.turnPrefixMessages, reserveTokens }),
          ctx.signal,
        );
        summary += SPLIT_TURN_SEPARATOR + prefix;
      }
      ctx.log("info", `summarized ${preparation.messagesToSummarize.length} messages with ${config.model}`);
      return {
        compaction: {
          summary: summary + formatFileOps(preparation.fileOps),
          firstKeptEntryId: preparation.firstKeptEntryId,
          tokensBefore: preparation.tokensBefore,
          details: { ...preparation.fileOps, summarizer: "openai-summarizer", model: config.model },
        },
      };
    },

    async session_before_tree(event, ctx) {
      const config = modelConfig();
      const { preparation } = event;
      if (config === undefined || !preparation.userWantsSummary) return undefined;
      // Like the daemon: tool results are left out, the assistant's tool calls say what was done.
      const messages: ContextMessage[] = preparation.entriesToSummarize.flatMap((entry) => {
        if (entry.type === "message" && entry.message.role === "toolResult") return [];
        const message = entryToContextMessage(entry);
        return message === undefined ? [] : [message];
      });
      if (messages.length === 0) return undefined;
      const request = buildBranchSummaryRequest({
        messages,
        customInstructions: preparation.customInstructions,
        replaceInstructions: preparation.replaceInstructions,
      });
      const text = await complete(config, request, ctx.signal);
      return { summary: { summary: text, details: { summarizer: "openai-summarizer", model: config.model } } };
    },
  },
});
