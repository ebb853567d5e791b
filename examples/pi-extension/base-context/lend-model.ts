/**
 * `model/complete`: the daemon asks pi's current model, with pi's own completion API and the
 * credentials pi resolved for it (API key, OAuth token, headers from models.json). The key never
 * leaves pi; the daemon only sees the answer.
 */
import { completeSimple, type Message } from "@mariozechner/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

/** pi's thinking level ("off", "minimal" … "xhigh"). */
export type PiThinkingLevel = ReturnType<ExtensionAPI["getThinkingLevel"]>;
import { ResponseError, type BaseContextClient, ModelComplete, ErrorCodes } from "@base-context/protocol";

/**
 * Answers the daemon's `model/complete` with the model of the pi context `current()` returns, at
 * pi's current thinking level (`thinkingLevel()`), as pi's own summaries use it: a reasoning model
 * thinks at that level, "off" (or a model without reasoning) sends no reasoning option.
 */
export function lendModel(
  client: BaseContextClient,
  current: () => ExtensionContext | undefined,
  thinkingLevel: () => PiThinkingLevel | undefined,
): void {
  client.onRequest(ModelComplete, async (params, signal) => {
    const ctx = current();
    const model = ctx?.model;
    if (!ctx || !model) throw new ResponseError(ErrorCodes.InternalError, "pi has no model selected");
    const auth = await ctx.modelRegistry.getApiKeyAndHeaders(model);
    if (!auth.ok) throw new ResponseError(ErrorCodes.InternalError, `pi cannot use ${model.provider}/${model.id}: ${auth.error}`);
    const level = thinkingLevel();
    const now = Date.now();
    const messages: Message[] = params.messages.map((message) =>
      message.role === "user"
        ? { role: "user", content: message.content, timestamp: now }
        : {
            role: "assistant",
            content: [{ type: "text", text: message.content }],
            api: model.api,
            provider: model.provider,
            model: model.id,
            usage: {
              input: 0,
              output: 0,
              cacheRead: 0,
              cacheWrite: 0,
              totalTokens: 0,
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
            },
            stopReason: "stop",
            timestamp: now,
          },
    );
    const response = await completeSimple(
      model,
      { ...(params.system !== undefined ? { systemPrompt: params.system } : {}), messages },
      {
        maxTokens: params.maxTokens,
        signal,
        ...(auth.apiKey !== undefined ? { apiKey: auth.apiKey } : {}),
        ...(auth.headers !== undefined ? { headers: auth.headers } : {}),
        ...(params.sessionId !== undefined ? { sessionId: params.sessionId } : {}),
        ...(model.reasoning && level !== undefined && level !== "off" ? { reasoning: level } : {}),
      },
    );
    if (response.stopReason === "error" || response.stopReason === "aborted") {
      throw new ResponseError(
        ErrorCodes.InternalError,
        response.errorMessage ?? `${model.id} ${response.stopReason === "aborted" ? "was aborted" : "failed"}`,
      );
    }
    const text = response.content
      .filter((block): block is { type: "text"; text: string } => block.type === "text")
      .map((block) => block.text)
      .join("\n");
    return { text, model: model.id, usage: { input: response.usage.input, output: response.usage.output } };
  });
}
