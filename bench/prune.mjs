// The prune rung (docs/compaction-rungs.md): what hiding old tool output saves next to a summary,
// on the repo's pi sessions (examples/sessions/*.jsonl and examples/sessions/corpus/*.jsonl) and
// on a generated 100k-entry agent session; then the model calls `auto` avoids over a long
// simulated agent run with turn/end at every turn and a 200k window. In-process on the pure core
// (what the daemon decides with), with the default settings. `pnpm build && node bench/prune.mjs`.
//
// Token counts: four characters a token (tokens.estimator "chars4") for the pi files; the
// generated sessions carry their counts. A summary is assumed to cost SUMMARY_TOKENS (no model
// runs here): "saved by summarizing" is the context before minus (kept part + summary).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { coreModule, daemonModule, repoRoot } from "./lib/dist.mjs";
import { agentRun } from "./lib/generated-session.mjs";
import { progress, report } from "./lib/report.mjs";

const core = await coreModule();
const { entryContextText } = await daemonModule("tokens/entry-text.js");
const { DEFAULT_SETTINGS } = await daemonModule("settings/defaults.js");

const SETTINGS = DEFAULT_SETTINGS.compaction;
const PRUNE = SETTINGS.prune;
const SUMMARY_TOKENS = 2_000;
const WINDOW = 200_000;
const SIMULATED_TURNS = 3_000;

/** Stored count as `tokens.estimator: "chars4"` gives it: images 1200, text / 4 rounded up. */
function chars4(entry) {
  const { text, images } = entryContextText(entry);
  return Math.ceil(text.length / 4) + images * 1200;
}

/** The path root → last line of a pi file, counted. */
function piPath(file) {
  const entries = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const value = JSON.parse(line);
    if (value.type !== "session") entries.push(value);
  }
  const byId = new Map(entries.map((entry) => [entry.id, entry]));
  const path = [];
  for (let entry = entries.at(-1); entry; entry = entry.parentId ? byId.get(entry.parentId) : undefined) path.push(entry);
  return path.reverse().map((entry) => ({ entry, tokens: chars4(entry) }));
}

/** Tokens of what the context holds from `firstKept` on (hidden outputs as stubs), plus a summary. */
function afterSummary(path, firstKeptEntryId, hidden) {
  const counted = core.withPrunedCounts(path, hidden);
  const start = counted.findIndex((item) => item.entry.id === firstKeptEntryId);
  let kept = 0;
  for (let i = start; i < counted.length; i++) if (core.isContextVisible(counted[i].entry)) kept += counted[i].tokens;
  return kept + SUMMARY_TOKENS;
}

/** Context tokens, and what pruning alone, summarizing alone and both would leave. */
function savings(path) {
  const before = core.buildContext({ path }).tokens;
  const prune = core.planPrune(path, PRUNE);
  const hidden = core.prunedOutputs(path);
  const plain = core.prepareCompaction(path, SETTINGS);
  const both = core.prepareCompaction(path, SETTINGS, { pruneMinTokens: PRUNE.minTokens });
  const summarizeLeaves = "preparation" in plain ? afterSummary(path, plain.preparation.firstKeptEntryId, hidden) : before;
  const bothLeaves =
    "preparation" in both
      ? afterSummary(path, both.preparation.firstKeptEntryId, core.withPlan(hidden, both.preparation.prune ?? core.EMPTY_PRUNE_PLAN))
      : before;
  return {
    before,
    prune: prune.tokensSaved,
    summarize: Math.max(0, before - summarizeLeaves),
    both: Math.max(0, before - bothLeaves),
  };
}

const percent = (part, whole) => (whole > 0 ? (100 * part) / whole : 0);

function reportSavings(label, totals, note) {
  const fmt = (n) => Math.round(n).toLocaleString("en-US");
  report({ name: `${label}: context`, value: totals.before, unit: "tokens", digits: 0, note });
  for (const [key, what] of [
    ["prune", "pruning alone"],
    ["summarize", "summarizing alone"],
    ["both", "summarize + prune the kept part"],
  ]) {
    report({
      name: `  saved by ${what}`,
      value: percent(totals[key], totals.before),
      unit: "%",
      digits: 1,
      note: `${fmt(totals[key])} tokens`,
    });
  }
}

// ---- the repo's sessions ------------------------------------------------------------------------

const folders = [join(repoRoot, "examples", "sessions"), join(repoRoot, "examples", "sessions", "corpus")];
const files = folders.filter((folder) => existsSync(folder)).flatMap((folder) =>
  readdirSync(folder)
    .filter((name) => name.endsWith(".jsonl"))
    .map((name) => join(folder, name)),
);
progress(`${files.length} pi session file(s) from examples/sessions`);
const corpus = { before: 0, prune: 0, summarize: 0, both: 0 };
for (const file of files) {
  const result = savings(piPath(file));
  for (const key of Object.keys(corpus)) corpus[key] += result[key];
}
reportSavings(`session corpus (${files.length} file${files.length === 1 ? "" : "s"})`, corpus, "whole contexts, summed");

// ---- a generated 100k-entry session -------------------------------------------------------------

progress("generating a 100k-entry agent session");
const generated = [];
const { rounds } = agentRun(30_000);
for (const round of rounds()) {
  generated.push(...round);
  if (generated.length >= 100_000) break;
}
generated.length = 100_000;
progress("measuring it");
reportSavings("generated 100k-entry session", savings(generated), `${generated.length.toLocaleString("en-US")} entries, never compacted`);

// ---- a long agent run: turn/end at every turn, 200k window --------------------------------------

/** The part of the path the daemon reads for a context: from the latest compaction's first kept entry. */
function contextSuffix(path, firstKeptIndex) {
  return firstKeptIndex > 0 ? path.slice(firstKeptIndex) : path;
}

function simulate(strategy) {
  const path = [];
  let firstKeptIndex = 0;
  let id = 0;
  const stats = { turnEnds: 0, modelCalls: 0, prunes: 0, peak: 0 };
  const threshold = core.compactionThreshold(WINDOW, { compaction: SETTINGS, context: { mode: "on" } });
  const append = (body, tokens) => {
    const entry = {
      ...body,
      id: `s${++id}`,
      parentId: path.at(-1)?.entry.id ?? null,
      timestamp: new Date(1_767_225_600_000 + id).toISOString(),
    };
    path.push({ entry, tokens });
    return entry.id;
  };
  const { rounds } = agentRun(SIMULATED_TURNS, { seed: 11 });
  for (const round of rounds()) {
    for (const item of round) {
      path.push({ entry: { ...item.entry, parentId: path.at(-1)?.entry.id ?? null }, tokens: item.tokens });
    }
    stats.turnEnds++;
    const suffix = contextSuffix(path, firstKeptIndex);
    const tokens = core.estimateContextTokens(suffix).tokens;
    stats.peak = Math.max(stats.peak, tokens);
    if (tokens <= threshold) continue;
    if (strategy === "auto") {
      const plan = core.planPrune(suffix, PRUNE);
      if (core.chooseRung(tokens, threshold, plan, PRUNE.minSavings) === "prune") {
        append(core.pruneEntryInput(plan), 0);
        stats.prunes++;
        continue;
      }
    }
    const prepared = core.prepareCompaction(suffix, SETTINGS, strategy === "auto" ? { pruneMinTokens: PRUNE.minTokens } : {});
    if (!("preparation" in prepared)) continue;
    const { preparation } = prepared;
    if (preparation.prune) append(core.pruneEntryInput(preparation.prune), 0);
    append({ type: "compaction", summary: "", firstKeptEntryId: preparation.firstKeptEntryId, tokensBefore: tokens }, SUMMARY_TOKENS);
    stats.modelCalls++;
    firstKeptIndex = path.findIndex((item) => item.entry.id === preparation.firstKeptEntryId);
  }
  return stats;
}

progress(`simulating ${SIMULATED_TURNS.toLocaleString("en-US")} agent tasks, summarize-only and auto`);
const summarizeOnly = simulate("summarize");
const auto = simulate("auto");
report({
  name: `agent run, ${summarizeOnly.turnEnds.toLocaleString("en-US")} turn/ends, 200k window: model calls, summarize only`,
  value: summarizeOnly.modelCalls,
  digits: 0,
});
report({ name: "  model calls with auto (prune first)", value: auto.modelCalls, digits: 0, note: `${auto.prunes} prune-only checkpoints` });
report({
  name: "  model calls avoided by auto",
  value: percent(summarizeOnly.modelCalls - auto.modelCalls, summarizeOnly.modelCalls),
  unit: "%",
  digits: 1,
  note: `${summarizeOnly.modelCalls - auto.modelCalls} fewer summaries`,
});
