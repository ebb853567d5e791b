/**
 * context/build and context/usage: the store gives the part of the path a context can hold,
 * the pure core turns it into messages and a usage estimate.
 */
import type { ContextBuild, ContextUsage, ResultOf, ValidParamsOf } from "@base-context/protocol";
import { buildContext, contextUsage, toOpenAIChat } from "@base-context/core";
import type { SessionService } from "../sessions/index.js";
import type { SessionSettings } from "../settings/session-settings.js";
import { requestSettings } from "../compaction/settings.js";

export class ContextService {
  constructor(
    private readonly sessions: SessionService,
    private readonly settings: SessionSettings,
  ) {}

  async build(params: ValidParamsOf<typeof ContextBuild>): Promise<ResultOf<typeof ContextBuild>> {
    return (await this.buildCounted(params)).context;
  }

  /**
   * `build`, and the stored token count behind each native message (`base-context show` prints
   * them: recounting the texts would load the tokenizer for numbers the store already holds).
   */
  async buildCounted(
    params: ValidParamsOf<typeof ContextBuild>,
  ): Promise<{ context: ResultOf<typeof ContextBuild>; messageTokens: number[] }> {
    const path = await this.sessions.getContextPath(params.sessionId, params.leafId);
    const built = buildContext({
      path: path.entries,
      latestModelChange: path.modelChange,
      // A reply by another model after the last model_change decides the model (as in pi), also
      // when that reply lies before the part of the path the context holds.
      latestModelEntry: path.modelEntry,
      latestThinkingLevelChange: path.thinkingLevelChange,
    });
    const context = {
      messages: params.format === "openai-chat" ? toOpenAIChat(built.messages) : built.messages,
      ...(built.model ? { model: built.model } : {}),
      thinkingLevel: built.thinkingLevel,
      ...(built.compactionId ? { compactionId: built.compactionId } : {}),
      tokens: built.tokens,
      ...(params.messageTokens === true && params.format === "native" ? { messageTokens: built.messageTokens } : {}),
      ...(built.prunedEntryIds.length > 0
        ? { pruned: { entryIds: built.prunedEntryIds, toolCallIds: built.prunedToolCallIds, tokensSaved: built.prunedTokens } }
        : {}),
    };
    return { context, messageTokens: built.messageTokens };
  }

  /** With the settings as they apply to the client's window (capped sizes, the request's overrides). */
  async usage(params: ValidParamsOf<typeof ContextUsage>): Promise<ResultOf<typeof ContextUsage>> {
    const { sessionId, contextWindow } = params;
    const path = await this.sessions.getContextPath(sessionId);
    const applied = requestSettings(this.settings.forSession(sessionId), {
      sources: this.settings.sourcesFor?.(sessionId),
      overrides: params.settings,
      contextWindow,
    });
    return contextUsage(path.entries, contextWindow, applied.settings, applied.conflict);
  }
}
