import { z } from "zod";
import { IdString } from "../limits.js";
import { request } from "../declare.js";
import { AgentMessage } from "../entries.js";
import { CompactionSettings } from "./settings.js";

// Object and union schemas are `z.lazy`: built on first use, not when this module loads (see
// ../entries.ts, docs/architecture.md#start-path-and-bundles).

/** A message in the built context. Summaries appear as their own roles so clients can render them. */
export const CompactionSummaryMessage = z.lazy(() =>
  z.object({
    role: z.literal("compactionSummary"),
    summary: z.string(),
    tokensBefore: z.number().nullable(),
    timestamp: z.number().optional(),
  }),
);
export const BranchSummaryMessage = z.lazy(() =>
  z.object({
    role: z.literal("branchSummary"),
    summary: z.string(),
    fromId: z.string(),
    timestamp: z.number().optional(),
  }),
);
export const ContextMessage = z.lazy(() => z.union([AgentMessage, CompactionSummaryMessage, BranchSummaryMessage]));
export type CompactionSummaryMessage = z.infer<typeof CompactionSummaryMessage>;
export type BranchSummaryMessage = z.infer<typeof BranchSummaryMessage>;
export type ContextMessage = z.infer<typeof ContextMessage>;

/** OpenAI chat-completions message, ready to send as is. */
export const OpenAIChatMessage = z.lazy(() =>
  z
    .object({
      role: z.enum(["system", "user", "assistant", "tool"]),
      content: z.union([z.string(), z.array(z.record(z.string(), z.unknown())), z.null()]),
      tool_calls: z
        .array(
          z.object({
            id: z.string(),
            type: z.literal("function"),
            function: z.object({ name: z.string(), arguments: z.string() }),
          }),
        )
        .optional(),
      tool_call_id: z.string().optional(),
    })
    .loose(),
);
export type OpenAIChatMessage = z.infer<typeof OpenAIChatMessage>;

export const ContextBuild = request(
  "context/build",
  () => z.object({
    sessionId: IdString(),
    leafId: IdString().nullable().optional(),
    format: z.enum(["native", "openai-chat"]).default("native"),
    /** Also return `messageTokens` (native format only). */
    messageTokens: z.boolean().optional(),
  }),
  () => z.object({
    messages: z.array(z.union([ContextMessage, OpenAIChatMessage])),
    model: z.object({ provider: z.string(), modelId: z.string() }).optional(),
    thinkingLevel: z.string(),
    compactionId: z.string().optional(),
    /** Sum of the stored token counts of what the context holds (a pruned output counts its stub). */
    tokens: z.number().int(),
    /**
     * With `messageTokens: true` and the native format: the stored token count behind each message,
     * in order (they add up to `tokens`).
     */
    messageTokens: z.array(z.number().int()).optional(),
    /**
     * Tool results shown as a stub because a `prune` entry on the path hides them (absent when
     * none): their entries, their tool call ids (to find them among `messages`), and the tokens
     * the stubs save against the full outputs.
     */
    pruned: z
      .object({ entryIds: z.array(z.string()), toolCallIds: z.array(z.string()), tokensSaved: z.number().int() })
      .optional(),
  }),
);

export const ContextUsage = request(
  "context/usage",
  () => z.object({
    sessionId: IdString(),
    contextWindow: z.number().int().positive(),
    settings: CompactionSettings.partial()
      .optional()
      .describe("Overrides of the session's compaction.* settings, as compaction/run takes them: the threshold uses their reserveTokens."),
  }),
  () => z.object({
    tokens: z.number().int(),
    usageTokens: z.number().int().nullable(),
    trailingTokens: z.number().int(),
    threshold: z.number().int(),
    shouldCompact: z.boolean(),
    settings: z
      .object({ reserveTokens: z.number().int(), keepRecentTokens: z.number().int() })
      .describe(
        "The compaction sizes for this window as the daemon applies them: yours, or, for a size you did not set, its share of " +
          "the window: the reserve its default capped at a quarter of it, the kept part a quarter of it " +
          "(docs/compaction-rungs.md#settings-that-fit-the-window).",
      ),
    reason: z
      .string()
      .optional()
      .describe("Why shouldCompact is what it is (over the threshold, compaction off), and settings that cannot fit the window."),
  }),
);
