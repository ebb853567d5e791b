/**
 * The one interface every summarizer implements (docs/design.md#summarizers).
 *
 * The compaction pipeline and tree navigation call `summarize(request)` the same way whatever
 * produces the text. A request carries two views of the same work:
 *
 * - `system` + `prompt`: the ready-made model prompt built by the core (serialized conversation in
 *   `<conversation>` tags, `<previous-summary>`, the update / turn-prefix / branch prompt, custom
 *   instructions). A model summarizer sends exactly these and nothing else.
 * - `messages` (+ `previousSummary`, `customInstructions`): the structured input the offline
 *   extractive summarizer reads, because it cannot "read" a prompt.
 *
 * Both views must describe the same range; the caller builds them together.
 */
import type { ContextMessage } from "@base-context/protocol";

/**
 * What is being summarized, which decides the prompt the core builds and the shape the
 * extractive summarizer produces:
 * - `history`: the messages before the cut point (compaction);
 * - `turnPrefix`: the early part of a turn split by the cut point (compaction, split turn);
 * - `branch`: an abandoned branch, when navigating the tree.
 */
export type SummaryKind = "history" | "turnPrefix" | "branch";

export interface SummaryRequest {
  readonly kind: SummaryKind;
  /**
   * The messages to summarize, chronologically, in their native shapes (pi's agent messages, plus
   * the `compactionSummary` / `branchSummary` messages a branch range may contain).
   */
  readonly messages: readonly ContextMessage[];
  /** The previous compaction summary, when this one updates it (iterative compaction). */
  readonly previousSummary?: string;
  /**
   * History only: the messages of the split turn that follows, summarized apart (its user message
   * first). A question the range ends on was answered there, its plans were overtaken by that
   * turn's work, and when the range states no goal of its own (only the context an agent injects
   * before the first request, as Codex does), that turn's request is the goal.
   */
  readonly followingTurn?: readonly ContextMessage[];
  /** `/compact <instructions>` or the tree's custom instructions: extra focus, high priority. */
  readonly customInstructions?: string;
  /** The custom instructions replace the default prompt instead of adding to it (tree navigation). */
  readonly replaceInstructions?: boolean;
  /** The system prompt for a model summarizer. */
  readonly system: string;
  /** The user prompt for a model summarizer (conversation, previous summary, instructions included). */
  readonly prompt: string;
  /** Upper bound on the summary length in tokens (e.g. floor(0.8 × reserveTokens) for history). */
  readonly maxTokens: number;
  /** The session the summary is for (sent along to a client's model). */
  readonly sessionId?: string;
  /** Aborts the work; a summarizer then rejects with `CancelledError` and nothing is produced. */
  readonly signal?: AbortSignal;
}

export interface SummaryUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
}

export interface SummaryResult {
  /** The summary text, without `<read-files>` / `<modified-files>` (the pipeline appends those). */
  readonly text: string;
  /** Which summarizer produced it, recorded on the entry: `"client:<model>"`, `"openai:<model>"` or `"extractive"`. */
  readonly summarizer: string;
  readonly usage?: SummaryUsage;
}

export interface Summarizer {
  /** Stable name, the same string results carry in `summarizer` (e.g. `"openai:gpt-4o-mini"`). */
  readonly id: string;
  /** Who writes and where the text goes, for logs and results: `openai:gpt-4o-mini at https://…`. */
  readonly description?: string;
  /**
   * The next summarizer to try when this one fails (`summarizer.provider: "auto"`: the client's
   * model, then the model the user's settings name); the extractive summarizer ends every chain.
   */
  readonly next?: Summarizer;
  /**
   * Rejects with `CancelledError` when `request.signal` aborts, and with `RequestFailedError`
   * (provider message and status in `data`) when the summary could not be produced.
   */
  summarize(request: SummaryRequest): Promise<SummaryResult>;
}
