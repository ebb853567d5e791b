/**
 * Facts (from the messages) + the previous summary → the sections of the structured format,
 * each item with a priority for the budget. The merge rules with a previous summary:
 * - Goal, Constraints, Done, Key Decisions and Critical Context: the previous items are kept and
 *   the new ones added after them (duplicates dropped);
 * - In Progress / Blocked: the previous items stay while no turn in the new range finished; once
 *   one did, previous in-progress items move to Done and previous blockers to Critical Context
 *   as possibly resolved (the extractive summarizer cannot tell for sure);
 * - Next Steps: rewritten from the new range (the latest plan, the question the user owes an
 *   answer to, the request still open: never a failed command, which is under Blocked); the
 *   previous ones only when the range brings none.
 * Every item passes the junk filter (@base-context/core, `retention/junk.ts`): no code, data, headings or empty items.
 */
import type { SummaryKind } from "../types.js";
import { firstRequest, type Facts, type Noted } from "./facts.js";
import { cap, chronological, dedupe, latestPerShape, Scorer } from "./items.js";
import type { ParsedSummary } from "./previous.js";
import { actionItems, fixedItems, unresolvedErrors } from "./progress.js";
import { KEEP, type Block, type Item } from "./render.js";
import { clip, code, junkKind, normalizeKey, OrderedSet } from "@base-context/core";

export interface ComposeInput {
  readonly kind: SummaryKind;
  readonly facts: Facts;
  readonly previous: ParsedSummary;
  readonly customInstructions?: string;
  /** History only: the request of the split turn that follows, the goal when the range states none. */
  readonly turnRequest?: string;
}

/** Upper bounds per section, so even a generous budget yields a summary a model can skim. */
const CAP = { requests: 60, constraints: 25, done: 60, inProgress: 6, blocked: 10, decisions: 15, nextSteps: 8, critical: 20, names: 20 };

export function composeBlocks(input: ComposeInput): Block[] {
  const scorer = new Scorer(input.facts.messageCount, input.customInstructions);
  const blocks = input.kind === "turnPrefix" ? turnPrefixBlocks(input, scorer) : structuredBlocks(input, scorer);
  return onlyOnce(withoutJunk(blocks));
}

/**
 * "Request: X", "User correction: X" and "X" are one item: it stays where it matters most — the
 * constraints first, then the Goal (never emptied), then the other sections in order.
 */
function onlyOnce(blocks: Block[]): Block[] {
  const seen = new Set<string>();
  const lists = blocks.filter((b): b is Extract<Block, { kind: "list" }> => b.kind === "list");
  const constraintsFirst = [...lists].sort((a, b) => Number(isConstraintList(blocks, b)) - Number(isConstraintList(blocks, a)));
  for (const block of constraintsFirst) {
    const isGoal = block.marker === "paragraph";
    block.items = block.items.filter((item) => {
      const key = normalizeKey(item.text.replace(/^- /, "").replace(/^[A-Z][\w ,]{0,40}:\s+/, ""));
      if (key.length < 12) return true;
      if (seen.has(key) && !isGoal) return false;
      seen.add(key);
      return true;
    });
  }
  return blocks;
}

function isConstraintList(blocks: readonly Block[], list: Block): boolean {
  const heading = blocks[blocks.indexOf(list) - 1];
  return heading?.kind === "heading" && heading.text.startsWith("## Constraints");
}

/** Drops items that are code, data, headings or empty, wherever they came from (a previous summary too). */
function withoutJunk(blocks: Block[]): Block[] {
  for (const block of blocks) {
    if (block.kind === "list") block.items = block.items.filter((item) => junkKind(item.text.replace(/^- /, "")) === undefined);
  }
  return blocks;
}

// ---- the structured format (history and branch) --------------------------------------------------

function structuredBlocks(input: ComposeInput, s: Scorer): Block[] {
  const { facts, previous } = input;
  const turnFinished = facts.anyTurnFinished;
  const goal = goalParts(input);

  const done: Item[] = [...previous.done.map((t) => s.item(t, 44))];
  if (turnFinished) done.push(...previous.inProgress.map((t) => s.item(t, 45)));
  done.push(
    ...chronological([
      ...actionItems(facts, s),
      ...latestPerShape(facts.statements).map((n) => s.noted(n, 52)),
      ...fixedItems(facts, s),
    ]),
  );
  // What the user asked before the current task, in their words (the Goal holds the current one).
  const asked: Item[] = [
    ...goal.earlier.map((t) => s.item(t, 46)),
    ...goal.handled.map((n) => s.noted({ text: `Request: ${clip(n.text, 200)}`, index: n.index }, 48)),
  ];

  // The current task is in the Goal: In Progress only carries what an earlier summary left open.
  const inProgress: Item[] = turnFinished ? [] : previous.inProgress.map((t) => s.item(t, 80));

  const blocked: Item[] = [];
  if (!turnFinished) blocked.push(...previous.blocked.map((t) => s.item(t, 70)));
  const standing = unresolvedErrors(facts);
  blocked.push(...standing.map((e) => s.noted({ text: `${e.what}: ${code(e.message)}`, index: e.index }, 88)));

  const critical: Item[] = criticalItems(input, s);
  if (turnFinished) critical.push(...previous.blocked.map((t) => s.item(`Earlier blocker (may be resolved): ${t}`, 42)));

  return [
    { kind: "heading", text: "## Goal" },
    { kind: "list", marker: "paragraph", items: goal.items, empty: "(not stated)" },
    { kind: "heading", text: "## Constraints & Preferences" },
    { kind: "list", marker: "- ", items: cap(constraintItems(input, s), CAP.constraints), empty: "- (none)" },
    { kind: "heading", text: "## Progress" },
    { kind: "heading", text: "### Done" },
    { kind: "list", marker: "- [x] ", items: [...cap(dedupe(asked), CAP.requests), ...cap(dedupe(done), CAP.done)], empty: "- (none)" },
    { kind: "heading", text: "### In Progress" },
    { kind: "list", marker: "- [ ] ", items: cap(dedupe(inProgress), CAP.inProgress), empty: "- (none)" },
    { kind: "heading", text: "### Blocked" },
    { kind: "list", marker: "- ", items: cap(dedupe(blocked), CAP.blocked), empty: "- (none)" },
    { kind: "heading", text: "## Key Decisions" },
    { kind: "list", marker: "- ", items: cap(decisionItems(input, s), CAP.decisions), empty: "- (none recorded)" },
    { kind: "heading", text: "## Next Steps" },
    {
      kind: "list",
      marker: "numbered",
      items: cap(dedupe(nextStepItems(input, s, standing.length > 0 ? standing[standing.length - 1]!.what : undefined)), CAP.nextSteps),
      empty: input.kind === "branch" ? "1. (none recorded)" : "1. Continue from the most recent messages.",
    },
    { kind: "heading", text: "## Critical Context" },
    { kind: "list", marker: "- ", items: cap(dedupe(critical), CAP.critical), empty: "- (none)" },
  ];
}

// ---- the turn-prefix format --------------------------------------------------------------------

function turnPrefixBlocks(input: ComposeInput, s: Scorer): Block[] {
  const { facts } = input;
  const request = firstRequest(facts);
  const progress: Item[] = chronological([
    ...actionItems(facts, s),
    ...latestPerShape(facts.statements).map((n) => s.noted(n, 52)),
    ...latestPerShape(facts.decisions).map((n) => s.noted({ text: formatDecision(n.text), index: n.index }, 58)),
    ...fixedItems(facts, s),
  ]);
  const context: Item[] = [
    ...unresolvedErrors(facts).map((e) => s.noted({ text: `Unresolved: ${e.what}: ${code(e.message)}`, index: e.index }, 88)),
    ...facts.plans.slice(0, 3).map((n) => s.noted({ text: `Was about to: ${n.text}`, index: n.index }, 80)),
    ...constraintItems(input, s),
    ...criticalItems(input, s),
  ];
  return [
    { kind: "heading", text: "## Original Request" },
    {
      kind: "list",
      marker: "paragraph",
      items: request ? [{ text: clip(request.text, 600), priority: KEEP }] : [],
      empty: "(the request is before this part of the turn)",
    },
    { kind: "heading", text: "## Early Progress" },
    { kind: "list", marker: "- ", items: cap(dedupe(progress), CAP.done), empty: "- (none)" },
    { kind: "heading", text: "## Context for Suffix" },
    { kind: "list", marker: "- ", items: cap(dedupe(context), CAP.critical), empty: "- (none)" },
  ];
}

// ---- sections -----------------------------------------------------------------------------------

interface GoalParts {
  items: Item[];
  /** Requests before the current task (not the background one): Done lists them. */
  handled: Noted[];
  /** An earlier summary's goal lines that are not the background: history now. */
  earlier: string[];
}

const BACKGROUND = "Background, the first request: ";
const CURRENT = "Current task: ";

/**
 * The Goal is the current task — the latest request and the short replies that follow it ("yes,
 * do it all") — with the session's first request as background when different. Not a list of
 * every message: the earlier requests are under Done, in the user's words.
 */
function goalParts(input: ComposeInput): GoalParts {
  const { facts, previous } = input;
  const thread = currentThread(facts.userTurns);
  const items: Item[] = [];
  const earlier: string[] = [];
  let background: string | undefined;
  for (const line of previous.goal) {
    if (line.startsWith(BACKGROUND)) background ??= line.slice(BACKGROUND.length);
    else if (background === undefined && !line.startsWith(CURRENT) && !line.startsWith("- ")) background = line;
    else earlier.push(line.replace(/^- /, "").replace(CURRENT, "Earlier task: "));
  }
  const first = facts.requests[0];
  if (background === undefined && first && !thread.some((t) => t.index === first.index)) background = first.text;
  if (thread.length > 0) {
    const [head, ...then] = thread;
    const replies = then.length > 0 ? ` Then: ${then.map((t) => `"${clip(t.text, 160)}"`).join("; ")}.` : "";
    items.push({ text: `${CURRENT}${clip(head!.text, 500)}${replies}`, priority: KEEP });
  } else if (earlier.length > 0) {
    // Nothing new was asked: the earlier summary's current task still is.
    items.push({ text: earlier.pop()!.replace(/^Earlier task: /, CURRENT), priority: KEEP });
  }
  if (background !== undefined) items.push({ text: `${BACKGROUND}${clip(background, 400)}`, priority: KEEP });
  // Nothing asked before the cut (Codex's injected context, then one long turn): that turn's request is the goal.
  if (items.length === 0 && input.turnRequest !== undefined) {
    items.push({ text: `${CURRENT}${clip(input.turnRequest, 500)}`, priority: KEEP });
  }
  const inGoal = new Set(thread.map((t) => t.index));
  const handled = facts.requests.filter((r) => !inGoal.has(r.index) && r !== first);
  if (first && !inGoal.has(first.index) && previous.goal.length > 0) handled.unshift(first);
  return { items, handled, earlier };
}

/** The latest request that says what to do (six words or more) and what the user said after it; at most four messages. */
function currentThread(turns: Facts["userTurns"]): Facts["userTurns"][number][] {
  const thread: Facts["userTurns"][number][] = [];
  for (let i = turns.length - 1; i >= 0 && thread.length < 4; i--) {
    const turn = turns[i]!;
    thread.unshift(turn);
    if (turn.request && turn.text.split(/\s+/).length >= 6) break;
  }
  // Only replies and remarks since the last request: start the thread at a request.
  while (thread.length > 0 && !thread[0]!.request) thread.shift();
  return thread;
}

/**
 * Next Steps from the latest state: the question the user owes an answer to; the plan the
 * assistant stated after its last action (an earlier plan was being carried out, and Done tells
 * how far); else the failure still standing, else the current task. Never a step Done holds.
 */
function nextStepItems(input: ComposeInput, s: Scorer, latestBlocker: string | undefined): Item[] {
  const { facts, previous } = input;
  const steps: Item[] = [];
  if (facts.question)
    steps.push(s.noted({ text: `Get the user's answer to: ${code(facts.question.text)}`, index: facts.question.index }, 86));
  const fresh = facts.plans.filter((plan) => plan.index >= facts.lastActionIndex && !doneSays(facts, plan));
  steps.push(...fresh.slice(0, 5).map((n) => s.noted(n, 80)));
  if (steps.length === 0 && latestBlocker !== undefined)
    steps.push({ text: `Fix the failure of ${latestBlocker} (under Blocked), then continue the current task.`, priority: 84 });
  else if (steps.length === 0 && facts.openRequest) steps.push({ text: "Continue the current task (see Goal).", priority: 82 });
  if (steps.length === 0 && !facts.anyTurnFinished) steps.push(...previous.nextSteps.map((t) => s.item(t, 60)));
  return steps;
}

/** A plan whose words a later "I did…" statement holds: done, not next. */
function doneSays(facts: Facts, plan: Noted): boolean {
  const words = (text: string) => new Set(normalizeKey(text).split(/[^a-z0-9_./-]+/).filter((w) => w.length >= 4).map((w) => w.slice(0, 5)));
  const planned = [...words(plan.text.replace(/^.*?\b(?:i'll|i will|we'll|we will|going to|need to)\s+/i, ""))];
  if (planned.length < 2) return false;
  return facts.statements.some((done) => {
    if (done.index < plan.index) return false;
    const said = words(done.text);
    return planned.filter((w) => said.has(w)).length >= Math.ceil(planned.length * 0.75);
  });
}

function constraintItems(input: ComposeInput, s: Scorer): Item[] {
  return dedupe([...input.previous.constraints.map((t) => s.item(t, 78)), ...input.facts.constraints.map((n) => s.noted(n, 80))]);
}

function decisionItems(input: ComposeInput, s: Scorer): Item[] {
  const fresh = latestPerShape(input.facts.decisions).map((n) => s.noted({ text: formatDecision(n.text), index: n.index }, 60));
  return dedupe([...input.previous.decisions.map((t) => s.item(t, 58)), ...fresh]);
}

/** `**What**: why` when the sentence gives its reason, as the format asks; else the sentence as written. */
function formatDecision(sentence: string): string {
  const match = /^(.{8,}?)[\s,;]+(because|since|so that|as it|to avoid|which means)\b\s*(.*)$/i.exec(sentence);
  if (!match) return sentence;
  return `**${match[1]!.trim()}**: ${match[2]!} ${match[3]!}`.trim();
}

function criticalItems(input: ComposeInput, s: Scorer): Item[] {
  const { facts, previous, customInstructions } = input;
  const items: Item[] = [];
  const focus = customInstructions?.trim();
  if (focus) items.push({ text: `Requested focus: ${clip(focus, 400)}`, priority: 96 });
  if (facts.lastTurnAborted) items.push({ text: "The last turn was aborted by the user.", priority: 90 });
  if (facts.question)
    items.push(s.noted({ text: `The assistant's last message asked: ${code(facts.question.text)}`, index: facts.question.index }, 89));

  const touched = new Set([...facts.actions.values()].filter((a) => a.kind === "read" || a.kind === "modify").map((a) => a.target));
  const named = new OrderedSet();
  for (const span of facts.codeSpans.values()) named.add(span);
  for (const id of facts.identifiers.values()) if (!named.has(id)) named.add(id);
  const names = named.values().slice(0, CAP.names);
  if (names.length > 0)
    items.push({ text: `Exact names from the user: ${names.map(code).join(", ")}`, priority: s.boost(names.join(" "), 66) });
  const paths = facts.paths
    .values()
    .filter((p) => !touched.has(p) && !named.has(p))
    .slice(0, CAP.names);
  if (paths.length > 0)
    items.push({ text: `Other files mentioned: ${paths.map(code).join(", ")}`, priority: s.boost(paths.join(" "), 50) });
  const urls = facts.urls.values().slice(0, 8);
  if (urls.length > 0) items.push({ text: `URLs: ${urls.join(", ")}`, priority: 55 });
  items.push(...facts.notes.slice(-8).map((n) => s.noted(n, 40)));
  items.push(...previous.critical.map((t) => s.item(t, 45)), ...previous.other.map((t) => s.item(t, 40)));
  return items;
}
