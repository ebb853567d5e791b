/**
 * The built-in offline summarizer (docs/design.md#summarizers): deterministic, no network, the same sections
 * as the model's summaries, built from the messages themselves. It cannot understand the work,
 * so it keeps what a model continuing it needs most, in the user's own words and with exact
 * names: the goal and constraints as stated, what was changed and run, what failed and is still
 * failing, the request still open and what the assistant was about to do.
 *
 * Same input → same output, byte for byte (no clock, no randomness, insertion-ordered maps).
 */
import type { ContextMessage } from "@base-context/protocol";
import { CancelledError } from "../../errors.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../types.js";
import { composeBlocks } from "./compose.js";
import { collectFacts, openingWords } from "./facts.js";
import { emptySummary, mergeParsed, parseSummary } from "./previous.js";
import { fitToBudget, render } from "./render.js";

export const EXTRACTIVE_SUMMARIZER_ID = "extractive";

/** Characters per token for the budget: the usual rough estimate, good enough for a cap. */
const CHARS_PER_TOKEN = 4;

export class ExtractiveSummarizer implements Summarizer {
  readonly id = EXTRACTIVE_SUMMARIZER_ID;
  readonly description = "extractive (built in, offline: nothing leaves this machine)";

  async summarize(request: SummaryRequest): Promise<SummaryResult> {
    if (request.signal?.aborted) throw new CancelledError();
    return { text: extractiveSummary(request), summarizer: this.id };
  }
}

/** The summary text for a request (synchronous; exported for the bench and the tests). */
export function extractiveSummary(
  request: Pick<SummaryRequest, "kind" | "messages" | "previousSummary" | "customInstructions" | "maxTokens" | "followingTurn">,
): string {
  // The previous summary belongs to the history; a turn prefix only describes its own messages.
  const updates = request.kind !== "turnPrefix" && typeof request.previousSummary === "string" && request.previousSummary.trim().length > 0;
  const parsed = updates ? parseSummary(request.previousSummary!) : emptySummary();
  // Its blockers are tracked from before the first message, so the messages can resolve them.
  const facts = collectFacts(request.messages, {
    ...(request.followingTurn ? { followingTurn: request.followingTurn } : {}),
    carriedBlockers: parsed.blocked,
  });
  const embedded = request.kind === "turnPrefix" ? [] : facts.embeddedSummaries.filter((s) => s.trim().length > 0).map(parseSummary);
  const previous = embedded.length > 0 ? mergeParsed([parsed, ...embedded]) : parsed;
  const turnRequest = request.followingTurn && turnRequestOf(request.followingTurn);
  const blocks = composeBlocks({
    kind: request.kind,
    facts,
    previous,
    ...(turnRequest ? { turnRequest } : {}),
    ...(request.customInstructions !== undefined ? { customInstructions: request.customInstructions } : {}),
  });
  fitToBudget(blocks, Math.max(400, Math.floor(request.maxTokens * CHARS_PER_TOKEN)));
  return render(blocks);
}

/** A split turn's request: read from its messages up to its first user message (the rest is that turn's work). */
function turnRequestOf(turn: readonly ContextMessage[]): string | undefined {
  const opening = turn.slice(0, turn.findIndex((message) => message.role === "user") + 1);
  return openingWords(collectFacts(opening))?.text;
}
