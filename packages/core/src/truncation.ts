/**
 * Outputs larger than the window (docs/compaction-rungs.md#outputs-larger-than-the-window): a tool
 * output the model has not read yet cannot be hidden behind a stub (the model would only run the
 * tool again), yet one larger than the window can never be sent. It is cut instead: its beginning
 * and end around a note, recorded in a prune entry like a stub (the item's `excerpt`).
 */
import type { PrunedOutput, ToolResultMessage } from "@base-context/protocol";
import { selectContextEntries } from "./context-selection.js";
import {
  describeArguments,
  excerptNote,
  isToolResultEntry,
  prunedOutputs,
  savedBy,
  stubTokenCount,
  toolCallArguments,
  withPrunedCounts,
  type PrunePlan,
} from "./prune.js";
import type { CountedEntry } from "./types.js";

/**
 * How much of a window tool outputs may take (docs/compaction-rungs.md#outputs-larger-than-the-window):
 * the outputs the model has not answered yet (the latest batch of calls) no more than half of it
 * together, the largest cut first: the model has yet to read them, so they are cut only as far as
 * the window forces. Outputs the model has answered are the prune rung's: they are cut, to a
 * quarter of the window each, only when pruning is off (`answered`).
 */
export interface TruncationLimits {
  /** The most an answered output keeps when pruning is off. */
  readonly outputTokens: number;
  readonly batchTokens: number;
  readonly answered: boolean;
}

export function truncationLimits(contextWindow: number, pruning: boolean): TruncationLimits {
  return { outputTokens: Math.floor(contextWindow / 4), batchTokens: Math.floor(contextWindow / 2), answered: !pruning };
}

/** Parts of an output's text an excerpt keeps: half from its beginning, half from its end. */
const HEAD_SHARE = 0.5;
/** A cut moves to a line break when one is this close (a share of the part kept), so lines stay whole. */
const LINE_SLACK = 0.2;

/**
 * The outputs to cut so that the context's tool outputs keep within `limits`: each is cut to its
 * share, keeping its beginning and end (an excerpt, stored in a prune entry like a stub). Outputs a
 * prune entry hides or cuts already are left as they are; outputs without text are never cut. The
 * model has not read an unanswered output yet: a stub would only make it run the tool again.
 */
export function planTruncation(path: readonly CountedEntry[], limits: TruncationLimits): PrunePlan {
  const hidden = prunedOutputs(path);
  const selection = selectContextEntries(withPrunedCounts(path, hidden));
  const visible = [...selection.keptBeforeCompaction, ...selection.afterCompaction];
  let lastAnswer = -1;
  for (let i = visible.length - 1; i >= 0 && lastAnswer < 0; i--) {
    const { entry } = visible[i]!;
    if (entry.type === "message" && entry.message.role === "assistant") lastAnswer = i;
  }
  const outputs = visible
    .map((item, index) => ({ item, index }))
    .filter(({ item, index }) => isToolResultEntry(item.entry) && !hidden.has(item.entry.id) && (limits.answered || index > lastAnswer))
    .filter(({ item }) => resultText(item).length > 0);
  const unanswered = outputs.filter(({ index }) => index > lastAnswer).map(({ item }) => item.tokens);
  const batchLevel = waterLevel(unanswered, limits.batchTokens);
  const calls = toolCallArguments(path);
  const chosen: PrunedOutput[] = [];
  for (const { item, index } of outputs) {
    const cap = index > lastAnswer ? batchLevel : limits.outputTokens;
    if (item.tokens <= cap) continue;
    const result = item as ToolResultItem;
    const cut = cutOutput(result, calls.get(result.entry.message.toolCallId), cap);
    if (cut.stubTokens < cut.tokens) chosen.push(cut);
  }
  return { hidden: chosen, tokensSaved: savedBy(chosen) };
}

/** The largest level L with Σ min(size, L) ≤ budget (Infinity when everything fits already). */
function waterLevel(sizes: readonly number[], budget: number): number {
  let total = 0;
  for (const size of sizes) total += size;
  if (total <= budget) return Number.POSITIVE_INFINITY;
  const sorted = [...sizes].sort((a, b) => a - b);
  let below = 0;
  for (let i = 0; i < sorted.length; i++) {
    const level = Math.floor((budget - below) / (sorted.length - i));
    if (level <= sorted[i]!) return Math.max(0, level);
    below += sorted[i]!;
  }
  return Number.POSITIVE_INFINITY;
}

/** A tool result entry with its count. */
export type ToolResultItem = CountedEntry & { entry: { message: ToolResultMessage } };

/** The text of a tool result (its text blocks); empty for one without text (an image). */
export function resultText(item: CountedEntry): string {
  const { entry } = item;
  if (!isToolResultEntry(entry)) return "";
  let text = "";
  for (const block of entry.message.content) if (block.type === "text") text += text ? `\n${block.text}` : block.text;
  return text;
}

/**
 * The output cut to about `tokens`: its beginning and end, sized with the output's own characters
 * per token (its stored count over its length), so no tokenizer is needed and every reader agrees
 * on the count stored with it. Lines are kept whole when a break is near: the excerpt ends a
 * little short of `tokens` (a cap, `"atMost"`), or goes a little past it (a floor, `"atLeast"`).
 */
export function cutOutput(
  item: ToolResultItem,
  args: Record<string, unknown> | undefined,
  tokens: number,
  bound: "atMost" | "atLeast" = "atMost",
): PrunedOutput {
  const text = resultText(item);
  const partial = { entryId: item.entry.id, toolName: item.entry.message.toolName, args: describeArguments(args), tokens: item.tokens };
  const call = partial.args ? `${partial.toolName} ${partial.args}` : partial.toolName;
  const noteTokens = stubTokenCount(excerptNote(call, partial.tokens));
  const charsPerToken = text.length / Math.max(1, item.tokens);
  const round = bound === "atLeast" ? Math.ceil : Math.floor;
  const keptChars = Math.max(0, round((tokens - noteTokens) * charsPerToken));
  const outward = bound === "atLeast";
  const head = headOf(text, Math.ceil(keptChars * HEAD_SHARE), outward);
  const tail = tailOf(text, keptChars - head.length, outward);
  // Grown to whole lines, beginning and end may meet: then nothing is cut.
  if (head.length + tail.length >= text.length) return { ...partial, stubTokens: item.tokens, excerpt: { head: text, tail: "" } };
  const stubTokens = Math.ceil((head.length + tail.length) / Math.max(charsPerToken, Number.EPSILON)) + noteTokens;
  return { ...partial, stubTokens, excerpt: { head, tail } };
}

/**
 * The first `chars` characters, ending at a line break when one is near (the one before, or with
 * `outward` the one after), never inside a surrogate pair.
 */
function headOf(text: string, chars: number, outward: boolean): string {
  if (chars <= 0) return "";
  let end = Math.min(text.length, chars);
  const lineBreak = outward ? text.indexOf("\n", end) : text.lastIndexOf("\n", end - 1);
  if (lineBreak >= 0 && Math.abs(end - lineBreak) <= chars * LINE_SLACK) end = lineBreak;
  if (end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end += outward ? 1 : -1;
  return text.slice(0, end);
}

/**
 * The last `chars` characters, starting after a line break when one is near (the one after, or
 * with `outward` the one before), never inside a surrogate pair.
 */
function tailOf(text: string, chars: number, outward: boolean): string {
  if (chars <= 0) return "";
  let start = Math.max(0, text.length - chars);
  const lineBreak = outward ? text.lastIndexOf("\n", start - 1) : text.indexOf("\n", start);
  if (lineBreak >= 0 && Math.abs(lineBreak + 1 - start) <= chars * LINE_SLACK) start = lineBreak + 1;
  if (start > 0 && start < text.length && isLowSurrogate(text.charCodeAt(start))) start += outward ? -1 : 1;
  return text.slice(start);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
