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

/** What the completion is for: lets a client pick a model or a budget per use. */
export const ModelPurpose = z.enum(["compaction", "turnPrefix", "branchSummary", "plugin"]);
export type ModelPurpose = z.infer<typeof ModelPurpose>;

export const ModelMessage = z.object({ role: z.enum(["user", "assistant"]), content: z.string() });
export type ModelMessage = z.infer<typeof ModelMessage>;

export const ModelComplete = request(
  "model/complete",
  z.object({
    purpose: ModelPurpose,
    /** The system prompt, when there is one (send it as the model's system/developer message). */
    system: z.string().optional(),
    /** The conversation to complete; for summaries, one user message holding the prompt. */
    messages: z.array(ModelMessage).min(1),
    /** Upper bound for the answer's length, in the model's tokens. */
    maxTokens: z.number().int().positive(),
    /** The session the work is for (absent for a plugin call made outside a session). */
    sessionId: z.string().optional(),
  }),
  z.object({
    /** The answer's text (reasoning blocks such as `<think>…</think>` are removed by the daemon). */
    text: z.string(),
    /** The model that answered, e.g. `"gpt-4.1-mini"`: recorded in the summary's `details.summarizer`. */
    model: z.string().optional(),
    usage: z.object({ input: z.number().optional(), output: z.number().optional() }).optional(),
  }),
  { sentBy: "daemon" },
);
