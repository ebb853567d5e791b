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
import { isTrivialRequest, type Facts } from "./facts.js";
import { cap, chronological, dedupe, latestPerShape, Scorer } from "./items.js";
import type { ParsedSummary } from "./previous.js";
import { actionItems, fixedItems, unresolvedErrors } from "./progress.js";
import { KEEP, type Block, type Item } from "./render.js";
import { clip, code, junkKind, OrderedSet } from "@base-context/core";

export interface ComposeInput {
  readonly kind: SummaryKind;
  readonly facts: Facts;
  readonly previous: ParsedSummary;
  readonly customInstructions?: string;
}

/** Upper bounds per section, so even a generous budget yields a summary a model can skim. */
const CAP = { followUps: 20, constraints: 25, done: 40, inProgress: 6, blocked: 10, decisions: 15, nextSteps: 8, critical: 20, names: 20 };

export function composeBlocks(input: ComposeInput): Block[] {
  const scorer = new Scorer(input.facts.messageCount, input.customInstructions);
  const blocks = input.kind === "turnPrefix" ? turnPrefixBlocks(input, scorer) : structuredBlocks(input, scorer);
  return withoutJunk(blocks);
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

  const done: Item[] = [...previous.done.map((t) => s.item(t, 44))];
  if (turnFinished) done.push(...previous.inProgress.map((t) => s.item(t, 45)));
  done.push(
    ...chronological([
      ...actionItems(facts, s),
      ...latestPerShape(facts.statements).map((n) => s.noted(n, 52)),
      ...fixedItems(facts, s),
    ]),
  );

  const inProgress: Item[] = [];
  if (!turnFinished) inProgress.push(...previous.inProgress.map((t) => s.item(t, 80)));
  if (facts.openRequest) inProgress.push(s.noted({ text: clip(facts.openRequest.text, 300), index: facts.openRequest.index }, 92));

  const blocked: Item[] = [];
  if (!turnFinished) blocked.push(...previous.blocked.map((t) => s.item(t, 70)));
  blocked.push(...unresolvedErrors(facts).map((e) => s.noted({ text: `${e.what}: ${code(e.message)}`, index: e.index }, 88)));

  const nextSteps: Item[] = [];
  if (facts.question)
    nextSteps.push(s.noted({ text: `Get the user's answer to: ${code(facts.question.text)}`, index: facts.question.index }, 86));
  nextSteps.push(...facts.plans.slice(0, 5).map((n) => s.noted(n, 80)));
  if (facts.openRequest && facts.plans.length === 0)
    nextSteps.push(s.noted({ text: `Continue: ${clip(facts.openRequest.text, 200)}`, index: facts.openRequest.index }, 82));
  if (nextSteps.length === 0) nextSteps.push(...previous.nextSteps.map((t) => s.item(t, 60)));

  const critical: Item[] = criticalItems(input, s);
  if (turnFinished) critical.push(...previous.blocked.map((t) => s.item(`Earlier blocker (may be resolved): ${t}`, 42)));

  return [
    { kind: "heading", text: "## Goal" },
    { kind: "list", marker: "paragraph", items: goalItems(input, s), empty: "(not stated)" },
    { kind: "heading", text: "## Constraints & Preferences" },
    { kind: "list", marker: "- ", items: cap(constraintItems(input, s), CAP.constraints), empty: "- (none)" },
    { kind: "heading", text: "## Progress" },
    { kind: "heading", text: "### Done" },
    { kind: "list", marker: "- [x] ", items: cap(dedupe(done), CAP.done), empty: "- (none)" },
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
      items: cap(dedupe(nextSteps), CAP.nextSteps),
      empty: input.kind === "branch" ? "1. (none recorded)" : "1. Continue from the most recent messages.",
    },
    { kind: "heading", text: "## Critical Context" },
    { kind: "list", marker: "- ", items: cap(dedupe(critical), CAP.critical), empty: "- (none)" },
  ];
}

// ---- the turn-prefix format --------------------------------------------------------------------

function turnPrefixBlocks(input: ComposeInput, s: Scorer): Block[] {
  const { facts } = input;
  const request = facts.requests.find((r) => r.text.length > 0);
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

function goalItems(input: ComposeInput, s: Scorer): Item[] {
  const { facts, previous } = input;
  const requests = facts.requests.filter((r) => !isTrivialRequest(r.text));
  const items: Item[] = [];
  const [firstGoal, ...earlierGoals] = previous.goal;
  if (firstGoal !== undefined) {
    items.push({ text: firstGoal, priority: KEEP });
    items.push(...earlierGoals.map((t) => s.item(t, 72)));
  }
  const primary = firstGoal === undefined ? requests[0] : undefined;
  if (primary) items.push({ text: clip(primary.text, 600), priority: KEEP });
  const followUps = requests.filter((r) => r !== primary).slice(-CAP.followUps);
  items.push(...followUps.map((r) => s.noted({ text: `- Later request: ${clip(r.text, 240)}`, index: r.index }, 70)));
  return dedupe(items);
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
