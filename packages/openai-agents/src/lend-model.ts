/**
 * `model/complete` answered with the app's own Agents SDK model: the daemon's summaries are written
 * by the model (and the credentials) the agent already uses; the daemon only sees the answer.
 */
import { OpenAIProvider, withTrace, type AgentInputItem, type Model } from "@openai/agents";
import { ErrorCodes, ModelComplete, ResponseError, type BaseContextClient } from "@base-context/protocol";

/** The endpoint runCompaction's usage is reported under (the runner adds it to the run's usage). */
export const COMPACTION_ENDPOINT = "base-context.compaction";

/** What the lent model's calls used, added up (runCompaction reports it to the runner). */
export interface LentUsage {
  requests: number;
  input: number;
  output: number;
}

function answerText(output: readonly unknown[]): string {
  const texts: string[] = [];
  for (const item of output as Record<string, unknown>[]) {
    if (item["type"] !== "message" || item["role"] !== "assistant") continue;
    for (const part of (item["content"] as Record<string, unknown>[] | undefined) ?? []) {
      if (part["type"] === "output_text" && typeof part["text"] === "string") texts.push(part["text"]);
    }
  }
  return texts.join("\n");
}

/** Answers `model/complete` with `model`: an Agents SDK model, or a model name for the SDK's OpenAI provider. */
export function lendModel(client: BaseContextClient, lent: Model | string, usage: LentUsage): void {
  let resolved: Promise<Model> | undefined;
  client.onRequest(ModelComplete, async (params, signal) => {
    resolved ??= typeof lent === "string" ? new OpenAIProvider().getModel(lent) : Promise.resolve(lent);
    const model = await resolved;
    const input = params.messages.map((message) =>
      message.role === "user"
        ? { role: "user", content: message.content }
        : { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: message.content }] },
    ) as AgentInputItem[];
    // The daemon's request arrives outside the agent's run, where the SDK's models expect a trace.
    const response = await withTrace("Base Context summary", () =>
      model.getResponse({
      ...(params.system !== undefined ? { systemInstructions: params.system } : {}),
      input,
      modelSettings: { maxTokens: params.maxTokens },
      tools: [],
      outputType: "text",
      handoffs: [],
        tracing: false,
        signal,
      }),
    );
    usage.requests += 1;
    usage.input += response.usage.inputTokens;
    usage.output += response.usage.outputTokens;
    const text = answerText(response.output);
    if (!text) throw new ResponseError(ErrorCodes.RequestFailed, "the Agents SDK model answered without text");
    return { text, usage: { input: response.usage.inputTokens, output: response.usage.outputTokens } };
  });
}
