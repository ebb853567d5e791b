/**
 * The one request the daemon sends to its client: `model/complete` asks the client's own model
 * for a completion (a compaction summary, a turn prefix, a branch summary, a plugin's
 * `ctx.complete`). A client receives it only when it opted in at `initialize` with
 * `capabilities.model.complete: true`; it answers as to any request, with a result or an error,
 * and may receive `$/cancelRequest` for it (the work it was for was cancelled). See
 * docs/summaries.md for where summaries are written and why.
 */
import { z } from "zod";
import { request } from "../declare.js";

// Object and union schemas are `z.lazy`: built on first use, not when this module loads (see
// ../entries.ts, docs/architecture.md#start-path-and-bundles).

/** What the completion is for: lets a client pick a model or a budget per use. */
export const ModelPurpose = z.enum(["compaction", "turnPrefix", "branchSummary", "plugin"]);
export type ModelPurpose = z.infer<typeof ModelPurpose>;

export const ModelMessage = z.lazy(() => z.object({ role: z.enum(["user", "assistant"]), content: z.string() }));
export type ModelMessage = z.infer<typeof ModelMessage>;

export const ModelComplete = request(
  "model/complete",
  () => z.object({
    purpose: ModelPurpose.describe(
      "What the text is for: a compaction's history, a split turn's prefix, a branch summary, or a plugin's ctx.complete.",
    ),
    system: z.string().optional().describe("The system prompt, when there is one: send it as the model's system (or developer) message."),
    messages: z
      .array(ModelMessage)
      .min(1)
      .describe("The conversation to complete; for a summary, one user message holding the whole prompt."),
    maxTokens: z.number().int().positive().describe("Upper bound for the answer's length, in the model's tokens."),
    sessionId: z.string().optional().describe("The session the work is for."),
  }),
  () => z.object({
    text: z
      .string()
      .describe("The answer (reasoning blocks such as <think>…</think> are removed by the daemon). Empty counts as a failure."),
    model: z
      .string()
      .optional()
      .describe('The model that answered, e.g. "gpt-4.1-mini": a summary\'s details.summarizer becomes "client:<model>".'),
    usage: z
      .object({ input: z.number().optional(), output: z.number().optional() })
      .optional()
      .describe("Tokens the call used, if the client knows."),
  }),
  { sentBy: "daemon" },
);
