/**
 * Facts (from the messages) + the previous summary → the sections of the structured format,
 * each item with a priority for the budget. The previous summary is brought up to date, not
 * copied (carry.ts): its current task stays the Goal while the part asks for nothing new, its
 * rules stay rules, its in-progress items the part finished move to Done, items naming a file the
 * part moved or removed go, its blockers stand only while the part has not resolved them.
 * Next Steps follow the state at the cut: the question the user owes an answer to, the plan the
 * assistant stated after its last action, the failure still standing, the open request, or
 * waiting for the user once the last request was answered.
 * Every item passes the junk filter (@base-context/core, `retention/junk.ts`): no code, trees,
 * stack frames, data, headings or empty items, and no text the agent's harness injected.
 */
import type { SummaryKind } from "../types.js";
import { carryPrevious, type Carried } from "./carry.js";
import { STOPPED } from "./action-log.js";
import { openingWords, type ErrorFact, type Facts } from "./facts.js";
import { currentTaskIndex, goalParts } from "./goal.js";
import { cap, chronological, dedupe, latestPerShape, listed, Scorer } from "./items.js";
import type { ParsedSummary } from "./previous.js";
import { actionItems, fileChangeItems, fixedItems, unresolvedErrors } from "./progress.js";
import { KEEP, type Block, type Item } from "./render.js";
import { clip, code, isHarnessLine, junkKind, normalizeKey, OrderedSet } from "@base-context/core";

export interface ComposeInput {
  readonly kind: SummaryKind;
  readonly facts: Facts;
  readonly previous: ParsedSummary;
  readonly customInstructions?: string;
  /** History only: the request of the split turn that follows, the goal when the range states none. */
  readonly turnRequest?: string;
}

/** Upper bounds per section, so even a generous budget yields a summary a model can skim. */
const CAP = { requests: 60, constraints: 25, done: 60, inProgress: 8, blocked: 10, decisions: 15, nextSteps: 8, critical: 20, names: 20 };

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
      const key = normalizeKey(item.text.replace(/^- /, "").replace(/^[A-Z][\w ,']{0,40}:\s+/, ""));
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

/** Drops items that are code, data, trees, headings, empty, or the harness's words, wherever they came from (a previous summary too). */
function withoutJunk(blocks: Block[]): Block[] {
  for (const block of blocks) {
    if (block.kind !== "list") continue;
    block.items = block.items.filter((item) => {
      const text = item.text.replace(/^- /, "");
      return junkKind(text) === undefined && !isHarnessLine(text);
    });
  }
  return blocks;
}

// ---- the structured format (history and branch) --------------------------------------------------

function structuredBlocks(input: ComposeInput, s: Scorer): Block[] {
  const { facts } = input;
  const carried = carryPrevious(input.previous, facts);
  const goal = goalParts(facts, carried, input.turnRequest, s);

  const done: Item[] = [
    ...carried.done.map((t) => s.item(t, 44)),
    ...carried.completed.map((t) => s.item(t, 47)),
    ...carried.fixed.slice(-5).map((t) => s.item(`Fixed earlier: ${t}`, 40)),
    ...chronological([
      ...actionItems(facts, s),
      ...fileChangeItems(facts, s),
      ...latestPerShape(facts.statements).map((n) => s.noted(n, 52)),
      ...fixedItems(facts, s),
    ]),
  ];
  const standing = unresolvedErrors(facts);
  const blocked = standing.map((e) => (e.carried ? s.item(e.what, 70) : s.noted({ text: blockerLine(e), index: e.index }, 88)));

  return [
    { kind: "heading", text: "## Goal" },
    { kind: "list", marker: "paragraph", items: goal.items, empty: "(not stated)" },
    { kind: "heading", text: "## Constraints & Preferences" },
    { kind: "list", marker: "- ", items: cap(constraintItems(input, carried, s), CAP.constraints), empty: "- (none)" },
    { kind: "heading", text: "## Progress" },
    { kind: "heading", text: "### Done" },
    { kind: "list", marker: "- [x] ", items: [...cap(dedupe(goal.asked), CAP.requests), ...cap(dedupe(done), CAP.done)], empty: "- (none)" },
    { kind: "heading", text: "### In Progress" },
    // The current task is in the Goal: In Progress carries what an earlier summary left open and the part did not finish.
    { kind: "list", marker: "- [ ] ", items: cap(dedupe(carried.inProgress.map((t) => s.item(t, 80))), CAP.inProgress), empty: "- (none)" },
    { kind: "heading", text: "### Blocked" },
    { kind: "list", marker: "- ", items: cap(dedupe(blocked), CAP.blocked), empty: "- (none)" },
    { kind: "heading", text: "## Key Decisions" },
    { kind: "list", marker: "- ", items: cap(decisionItems(input, carried, s), CAP.decisions), empty: "- (none recorded)" },
    { kind: "heading", text: "## Next Steps" },
    { kind: "list", marker: "numbered", items: cap(dedupe(nextStepItems(input, carried, s)), CAP.nextSteps), empty: "1. (none recorded)" },
    { kind: "heading", text: "## Critical Context" },
    { kind: "list", marker: "- ", items: cap(dedupe(criticalItems(input, carried, s)), CAP.critical), empty: "- (none)" },
  ];
}

// ---- the turn-prefix format --------------------------------------------------------------------

function turnPrefixBlocks(input: ComposeInput, s: Scorer): Block[] {
  const { facts } = input;
  const request = openingWords(facts);
  const progress: Item[] = chronological([
    ...actionItems(facts, s),
    ...fileChangeItems(facts, s),
    ...latestPerShape(facts.statements).map((n) => s.noted(n, 52)),
    ...latestPerShape(facts.decisions).map((n) => s.noted({ text: formatDecision(n.text), index: n.index }, 58)),
    ...fixedItems(facts, s),
  ]);
  const context: Item[] = [
    ...unresolvedErrors(facts).map((e) => s.noted({ text: `Unresolved: ${blockerLine(e)}`, index: e.index }, 88)),
    ...facts.plans.slice(0, 3).map((n) => s.noted({ text: `Was about to: ${n.text}`, index: n.index }, 80)),
    ...constraintItems(input, undefined, s),
    ...criticalItems(input, undefined, s),
  ];
  return [
    { kind: "heading", text: "## Original Request" },
    {
      kind: "list",
      marker: "paragraph",
      items: request ? [{ text: clip(request.text, 2000), priority: KEEP }] : [],
      empty: "(the request is before this part of the turn)",
    },
    { kind: "heading", text: "## Early Progress" },
    { kind: "list", marker: "- ", items: cap(dedupe(progress), CAP.done), empty: "- (none)" },
    { kind: "heading", text: "## Context for Suffix" },
    { kind: "list", marker: "- ", items: cap(dedupe(context), CAP.critical), empty: "- (none)" },
  ];
}

// ---- sections -----------------------------------------------------------------------------------

/**
 * Next Steps from the state at the cut: the question the user owes an answer to; the plan the
 * assistant stated after its last action (an earlier plan was being carried out, and Done tells
 * how far); else the failure still standing; else the open request; else what an earlier summary
 * left in progress; else, the last request answered, waiting for the user. An earlier summary's
 * steps only while the part holds no finished turn of its own. Never a step Done holds.
 */
function nextStepItems(input: ComposeInput, carried: Carried, s: Scorer): Item[] {
  const { facts } = input;
  const steps: Item[] = [];
  if (facts.question)
    steps.push(s.noted({ text: `Get the user's answer to: ${code(facts.question.text)}`, index: facts.question.index }, 86));
  const fresh = facts.plans.filter((plan) => plan.index >= facts.lastActionIndex && !doneSays(facts, plan));
  steps.push(...fresh.slice(0, 5).map((n) => s.noted(n, 80)));
  if (steps.length > 0) return steps;
  const blocking = blockerSteps(facts);
  if (blocking.length > 0) return blocking;
  if (facts.followedByTurn) return [{ text: "Continue the turn below (its request is under Turn Context).", priority: 82 }];
  if (facts.openRequest) return [{ text: "Continue the current task (see Goal).", priority: 82 }];
  if (!facts.anyTurnFinished && carried.nextSteps.length > 0) return carried.nextSteps.map((t) => s.item(t, 60));
  if (carried.inProgress.length > 0) return [{ text: "Continue the work under In Progress.", priority: 78 }];
  if (facts.anyTurnFinished && facts.answered) return [{ text: "Wait for the user's next request: the last one was answered.", priority: 76 }];
  return input.kind === "branch" ? [] : [{ text: "Continue from the most recent messages.", priority: 70 }];
}

/**
 * The failures that hold up the current task (docs/retention.md "Fixed or standing"): standing,
 * met since its request (or any, when an earlier summary's task is still the current one), not
 * left behind with a task the user stopped. A refused call: ask the user how to proceed; commands
 * that need the user's password: ask the user to run them; else fix the latest.
 */
function blockerSteps(facts: Facts): Item[] {
  const since = currentTaskIndex(facts);
  const current = unresolvedErrors(facts).filter((e) => e.abandoned !== true && (e.index > since || (since < 0 && e.carried === true)));
  const latest = current[current.length - 1];
  if (latest?.refused) {
    const what = latest.what.replace(/ \(refused by the user\).*$/, "");
    return [{ text: `Ask the user how to proceed: they refused ${what}.`, priority: 84 }];
  }
  const steps: Item[] = [];
  const privileged = current.filter((e) => e.privileged === true).map((e) => failedCommand(e));
  if (privileged.length > 0) {
    const which = listed([...new Set(privileged)], 3);
    steps.push({ text: `Ask the user to run ${which} in their own terminal: it needs their password, which the agent cannot type.`, priority: 85 });
  }
  const other = current.filter((e) => e.privileged !== true).pop();
  if (other !== undefined) steps.push({ text: `Fix the failure of ${failedCommand(other)} (under Blocked), then continue the current task.`, priority: 84 });
  return steps;
}

/** What failed, by name: a command or a file in its code span (a carried blocker's line names it by its first one). */
function failedCommand(failure: ErrorFact): string {
  // `Command failed: cygpath -u …`: the harness's command failed, whatever action it broke.
  const named = /^Command failed: (.+)$/.exec(failure.message)?.[1];
  if (named !== undefined) return code(named);
  if (failure.carried) return /^`[^`]+`/.exec(failure.what)?.[0] ?? clip(failure.what, 120);
  return failure.what.replace(/ \((?:exit -?\d+|refused by the user)\)$/, "");
}

/** A standing failure as Blocked lists it: what failed, whether its task was stopped, its error line. */
function blockerLine(failure: ErrorFact): string {
  return `${failure.what}${failure.abandoned === true ? ` ${STOPPED}` : ""}: ${code(failure.message)}`;
}

/** A plan whose words a later "I did…" statement holds: done, not next. */
function doneSays(facts: Facts, plan: { text: string; index: number }): boolean {
  const words = (text: string) => new Set(normalizeKey(text).split(/[^a-z0-9_./-]+/).filter((w) => w.length >= 4).map((w) => w.slice(0, 5)));
  const planned = [...words(plan.text.replace(/^.*?\b(?:i'll|i will|we'll|we will|going to|need to)\s+/i, ""))];
  if (planned.length < 2) return false;
  return facts.statements.some((done) => {
    if (done.index < plan.index) return false;
    const said = words(done.text);
    return planned.filter((w) => said.has(w)).length >= Math.ceil(planned.length * 0.75);
  });
}

/** The rules: an earlier summary's, then the part's, then the user's answers to the agent's questions (their choices). */
function constraintItems(input: ComposeInput, carried: Carried | undefined, s: Scorer): Item[] {
  return dedupe([
    ...(carried?.constraints ?? []).map((t) => s.item(t, 78)),
    ...input.facts.constraints.map((n) => s.noted(n, 80)),
    ...input.facts.answers.map((n) => s.noted({ text: `User's answer: ${n.text}`, index: n.index }, 79)),
  ]);
}

function decisionItems(input: ComposeInput, carried: Carried, s: Scorer): Item[] {
  const fresh = latestPerShape(input.facts.decisions).map((n) => s.noted({ text: formatDecision(n.text), index: n.index }, 60));
  return dedupe([...carried.decisions.map((t) => s.item(t, 58)), ...fresh]);
}

/** `**What**: why` when the sentence gives its reason, as the format asks; else the sentence as written. */
function formatDecision(sentence: string): string {
  const match = /^(.{8,}?)[\s,;]+(because|since|so that|as it|to avoid|which means)\b\s*(.*)$/i.exec(sentence);
  if (!match) return sentence;
  return `**${match[1]!.trim()}**: ${match[2]!} ${match[3]!}`.trim();
}

function criticalItems(input: ComposeInput, carried: Carried | undefined, s: Scorer): Item[] {
  const { facts, customInstructions } = input;
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
  items.push(...(carried?.critical ?? []).map((t) => s.item(t, 45)));
  return items;
}
