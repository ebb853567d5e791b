/**
 * The prune rung (docs/compaction-rungs.md): old, large tool results are shown to the model as a
 * one-line stub instead of their output. Nothing stored changes: a `prune` entry on the path
 * lists the tool results it hides, and everything that reads the path (context building, usage,
 * cut points) applies the prune entries it finds on it. A branch without the prune entry sees
 * the full outputs; a compaction's summarizer reads the stored entries, so it sees them too.
 */
import type { PrunedOutput, PruneEntry, SessionEntry, ToolResultMessage } from "@base-context/protocol";
import { selectContextEntries } from "./context-selection.js";
import type { CountedEntry } from "./types.js";

/** What the prune entries on a path hide: tool result entry id → how it is shown. */
export type PrunedOutputs = ReadonlyMap<string, PrunedOutput>;

const NONE: PrunedOutputs = new Map();

/** Settings of the prune rung (`compaction.prune`) that decide what may be hidden. */
export interface PruneLimits {
  /** The newest this many tokens of the context are never pruned. */
  readonly protectTokens: number;
  /** Only tool results above this many tokens are worth a stub. */
  readonly minTokens: number;
}

/** A set of tool results to hide together, and what hiding them saves. */
export interface PrunePlan {
  readonly hidden: readonly PrunedOutput[];
  readonly tokensSaved: number;
}

export const EMPTY_PRUNE_PLAN: PrunePlan = { hidden: [], tokensSaved: 0 };

/** Every tool result hidden (or cut) by a prune entry on the path (the first entry naming one wins). */
export function prunedOutputs(path: readonly CountedEntry[]): PrunedOutputs {
  let found: Map<string, PrunedOutput> | undefined;
  for (const { entry } of path) {
    if (entry.type !== "prune") continue;
    found ??= new Map();
    for (const item of entry.hidden) if (!found.has(item.entryId)) found.set(item.entryId, item);
  }
  return found ?? NONE;
}

/** What the model reads in place of a hidden output: the stub, or the excerpt of a cut one around its note. */
export function pruneStub(item: Pick<PrunedOutput, "toolName" | "args" | "tokens" | "excerpt">): string {
  const call = item.args ? `${item.toolName} ${item.args}` : item.toolName;
  if (item.excerpt) return `${item.excerpt.head}\n${excerptNote(call, item.tokens)}\n${item.excerpt.tail}`;
  return `[output of ${call} pruned: ${thousands(item.tokens)} tokens — call the tool again to see it]`;
}

/** The note between a cut output's beginning and end. */
export function excerptNote(call: string, tokens: number): string {
  return `[… output of ${call} cut here to fit the context window: ${thousands(tokens)} tokens in all, its beginning and end are shown …]`;
}

/** 12345 → "12,345" (what toLocaleString("en-US") gives, without its cost on 100k outputs). */
export function thousands(value: number): string {
  return String(Math.round(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * A stub's token count: four characters a token, rounded up (the stub is a few dozen tokens; the
 * count is stored in the prune entry so every reader agrees on it).
 */
export function stubTokenCount(stub: string): number {
  return Math.ceil(stub.length / 4);
}

/** The tool result as the context shows it once hidden: same call id and tool, the stub as content. */
export function prunedToolResult(message: ToolResultMessage, item: PrunedOutput): ToolResultMessage {
  const { details: _details, ...rest } = message;
  return { ...rest, content: [{ type: "text", text: pruneStub(item) }] };
}

/** Whether an entry is a tool result (the only kind of entry pruning hides). */
export function isToolResultEntry(entry: SessionEntry): entry is SessionEntry & { type: "message"; message: ToolResultMessage } {
  return entry.type === "message" && entry.message.role === "toolResult";
}

/**
 * The path with the stored counts of hidden tool results replaced by their stubs' counts: what
 * the context really holds. The same array when nothing is hidden (the common, fast case).
 */
export function withPrunedCounts(path: readonly CountedEntry[], hidden: PrunedOutputs): readonly CountedEntry[] {
  if (hidden.size === 0) return path;
  return path.map((item) => {
    const pruned = hidden.get(item.entry.id);
    return pruned && isToolResultEntry(item.entry) ? { entry: item.entry, tokens: pruned.stubTokens } : item;
  });
}

/** Arguments that say best what a tool call was about, in order of preference. */
const TELLING_ARGUMENTS = ["path", "file_path", "file", "command", "cmd", "pattern", "query", "url"];
const MAX_ARGS_CHARS = 80;

/** The call's arguments as a stub shows them: its most telling argument, else its JSON, one line, short. */
export function describeArguments(args: Record<string, unknown> | undefined): string {
  if (!args) return "";
  const telling = TELLING_ARGUMENTS.map((name) => args[name]).find(
    (value): value is string => typeof value === "string" && value.length > 0,
  );
  const text = (telling ?? (Object.keys(args).length > 0 ? JSON.stringify(args) : "")).replace(/\s+/g, " ").trim();
  return text.length > MAX_ARGS_CHARS ? `${text.slice(0, MAX_ARGS_CHARS - 1)}…` : text;
}

/** Tool call id → its arguments, for the calls on the path. */
export function toolCallArguments(path: readonly CountedEntry[]): Map<string, Record<string, unknown>> {
  const calls = new Map<string, Record<string, unknown>>();
  for (const { entry } of path) {
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    for (const block of entry.message.content) if (block.type === "toolCall") calls.set(block.id, block.arguments);
  }
  return calls;
}

/** What hiding one tool result looks like. */
export function prunedOutputOf(
  item: CountedEntry & { entry: { message: ToolResultMessage } },
  args: Record<string, unknown> | undefined,
): PrunedOutput {
  const partial = { entryId: item.entry.id, toolName: item.entry.message.toolName, args: describeArguments(args), tokens: item.tokens };
  return { ...partial, stubTokens: stubTokenCount(pruneStub(partial)) };
}

interface PruneCandidateRules {
  /** Tokens of context after a tool result below which it is protected (0: none protected). */
  readonly protectTokens: number;
  readonly minTokens: number;
  /** Only entries at or after this index of the path (the context's part a compaction keeps). */
  readonly fromIndex?: number;
}

/**
 * Tool results the context shows in full that the rules let hide, oldest first. Never one the
 * model has not answered yet (after the last assistant message), nor one hidden already.
 */
function pruneCandidates(path: readonly CountedEntry[], rules: PruneCandidateRules): PrunePlan {
  const hidden = prunedOutputs(path);
  const counted = withPrunedCounts(path, hidden);
  const selection = selectContextEntries(counted);
  const visible = [...selection.keptBeforeCompaction, ...selection.afterCompaction];
  const fromIndex = rules.fromIndex ?? 0;
  const eligibleIds = fromIndex > 0 ? new Set(path.slice(fromIndex).map((item) => item.entry.id)) : undefined;
  const calls = toolCallArguments(path);

  const chosen: PrunedOutput[] = [];
  let after = 0;
  let answered = false;
  for (let i = visible.length - 1; i >= 0; i--) {
    const item = visible[i]!;
    const { entry } = item;
    if (entry.type === "message" && entry.message.role === "assistant") answered = true;
    const protectedByWindow = after < rules.protectTokens;
    after += item.tokens;
    if (!answered || protectedByWindow || !isToolResultEntry(entry) || hidden.has(entry.id)) continue;
    if (item.tokens <= rules.minTokens) continue;
    if (eligibleIds && !eligibleIds.has(entry.id)) continue;
    const output = prunedOutputOf(item as CountedEntry & { entry: { message: ToolResultMessage } }, calls.get(entry.message.toolCallId));
    if (output.tokens > output.stubTokens) chosen.push(output);
  }
  chosen.reverse();
  return { hidden: chosen, tokensSaved: savedBy(chosen) };
}

export function savedBy(hidden: readonly PrunedOutput[]): number {
  let saved = 0;
  for (const item of hidden) saved += Math.max(0, item.tokens - item.stubTokens);
  return saved;
}

/**
 * The prune rung alone: tool results above `minTokens` with at least `protectTokens` of context
 * after them (the newest part of the conversation stays whole).
 */
export function planPrune(path: readonly CountedEntry[], limits: PruneLimits): PrunePlan {
  return pruneCandidates(path, { protectTokens: limits.protectTokens, minTokens: limits.minTokens });
}

/**
 * Pruning alongside a summary: every tool result above `minTokens` in the part from `fromIndex`
 * on, the recent window included — the kept tail is a budget for the conversation, and one large
 * output must not push the user's last messages into the summary.
 */
export function planTailPrune(path: readonly CountedEntry[], minTokens: number, fromIndex: number): PrunePlan {
  return pruneCandidates(path, { protectTokens: 0, minTokens, fromIndex });
}

/** The prune entry to append for a plan. */
export function pruneEntryInput(plan: PrunePlan): Pick<PruneEntry, "type" | "hidden" | "tokensSaved"> {
  return { type: "prune", hidden: [...plan.hidden], tokensSaved: plan.tokensSaved };
}

/** Keeps only the items of a plan whose entries are at or after `index` of the path. */
export function planFrom(path: readonly CountedEntry[], plan: PrunePlan, index: number): PrunePlan {
  if (plan.hidden.length === 0) return plan;
  const kept = new Set(path.slice(Math.max(0, index)).map((item) => item.entry.id));
  const hidden = plan.hidden.filter((item) => kept.has(item.entryId));
  return hidden.length === plan.hidden.length ? plan : { hidden, tokensSaved: savedBy(hidden) };
}

/** The map of a plan's items, merged over what is hidden already. */
export function withPlan(hidden: PrunedOutputs, plan: PrunePlan): PrunedOutputs {
  if (plan.hidden.length === 0) return hidden;
  const merged = new Map(hidden);
  for (const item of plan.hidden) if (!merged.has(item.entryId)) merged.set(item.entryId, item);
  return merged;
}

/**
 * Which rung a context over its threshold calls for: pruning when it alone brings the context at
 * least `minSavings` under the threshold (no model call), else a summary.
 */
export function chooseRung(contextTokens: number, threshold: number, plan: PrunePlan, minSavings: number): "prune" | "summarize" {
  return plan.hidden.length > 0 && contextTokens - plan.tokensSaved <= threshold - minSavings ? "prune" : "summarize";
}
