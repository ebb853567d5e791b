// Summaries judged against people's labels, not against our own probes (docs/retention.md
// "Scoring against labels"): every labelled real session of ../shared/corpus is compacted whole
// (keepRecentTokens 0) with the offline extractive summarizer through the daemon's pipeline, and
// scored per kind: recall and precision of requests and constraints, recall of the errors still
// standing, fixed errors listed as blocked, junk lines, Next Steps contradicted by Done. Beside
// it: a one-line model summary as repair leaves it, and Claude Code's own summary where one exists.
// Runs against the build: `pnpm bench` (or `pnpm build && tsc -p packages/daemon/tsconfig.bench.json
// && node bench/quality.mjs`).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { daemonModule, fixtureModule, repoRoot } from "./lib/dist.mjs";
import { report } from "./lib/report.mjs";

const { scoreSummary, percent } = await fixtureModule("summarizer/quality/fixtures/score.js");
const { CORPUS_FROM_ROOT, claudeCodeSummary, compactLabelled, labelledSessions, importsFormat } = await fixtureModule(
  "summarizer/quality/fixtures/labelled-sessions.js",
);
const { Daemon } = await daemonModule("daemon.js");

/** The targets of issue "Summaries judged by people": the threshold test holds the same. */
const TARGETS = {
  requestsPrecision: 90,
  requestsRecall: 80,
  constraintsPrecision: 90,
  constraintsRecall: 70,
  unresolvedRecall: 90,
};

const corpus = join(repoRoot, CORPUS_FROM_ROOT);
const sessions = labelledSessions(corpus);
if (sessions.length === 0) {
  process.stdout.write(`no labelled corpus at ${CORPUS_FROM_ROOT} (relative to the repository): nothing to measure\n`);
  process.exit(0);
}

const home = mkdtempSync(join(tmpdir(), "bc-quality-"));
// A fresh home: no model configured, so the summaries are the offline extractive summarizer's.
const env = { ...process.env, BASE_CONTEXT_HOME: home, OPENAI_API_KEY: "" };
const daemon = new Daemon({ env, databasePath: join(home, "sessions.db"), watchSettings: false });

const pct = (ratio) => {
  const value = percent(ratio);
  return value === undefined ? "  n/a" : `${value.toFixed(0).padStart(4)}%`;
};
const cell = (ratio) => `${pct(ratio)} (${ratio.hit}/${ratio.of})`.padEnd(16);

const totals = new Map();
function add(who, score) {
  const t = totals.get(who) ?? {
    ...Object.fromEntries(["rr", "rp", "cr", "cp", "er", "ep"].map((key) => [key, [0, 0]])),
    fixedBlocked: 0,
    junk: 0,
    contradicted: 0,
    notList: 0,
  };
  const sum = (key, ratio) => {
    t[key][0] += ratio.hit;
    t[key][1] += ratio.of;
  };
  sum("rr", score.requests.recall);
  sum("rp", score.requests.precision);
  sum("cr", score.constraints.recall);
  sum("cp", score.constraints.precision);
  sum("er", score.unresolvedErrors.recall);
  sum("ep", score.unresolvedErrors.precision);
  t.fixedBlocked += score.resolvedAsBlocked.length;
  t.junk += score.junk.length;
  t.contradicted += score.nextSteps.contradicted.length;
  t.notList += score.fromNotLists.length;
  totals.set(who, t);
}

const COLUMNS = ["req R", "req P", "con R", "con P", "open err R", "fixed-as-blocked", "junk", "next-contradicted", "not-list"];
const lines = [`${"session / summary".padEnd(44)} ${COLUMNS.map((c, i) => (i < 5 ? c.padEnd(16) : c)).join(" ")}`];
function row(label, score) {
  const ratios = [
    score.requests.recall,
    score.requests.precision,
    score.constraints.recall,
    score.constraints.precision,
    score.unresolvedErrors.recall,
  ];
  const counts = [score.resolvedAsBlocked, score.junk, score.nextSteps.contradicted, score.fromNotLists].map((list) => list.length);
  const countCells = counts.map((n, i) => String(n).padStart(COLUMNS[5 + i].length));
  lines.push(`${label.padEnd(44)} ${ratios.map(cell).join(" ")} ${countCells.join(" ")}`);
}
const details = [];
const skipped = [];
try {
  for (const session of sessions) {
    if (!importsFormat(session.format)) {
      skipped.push(`${session.name}: skipped, this build cannot import ${session.format} sessions`);
      continue;
    }
    const compacted = await compactLabelled(daemon, session);
    const ours = scoreSummary(compacted.summary, session.labels, compacted.inRange);
    const oneLine = scoreSummary(compacted.oneLine.summary, session.labels, compacted.inRange);
    row(`${session.name.slice(0, 22)} extractive`, ours);
    row(`${session.name.slice(0, 22)} one line + repair`, oneLine);
    add("extractive", ours);
    add("one line + repair", oneLine);
    details.push(`${session.name} (extractive): ${explain(ours)}`);
    details.push(`${session.name} (one line + repair, ${compacted.oneLine.summary.split("\n").length} lines): ${explain(oneLine)}`);
    if (session.claudeCodeCompaction) {
      const theirs = claudeCodeSummary(session.claudeCodeCompaction);
      if (theirs) {
        const score = scoreSummary(theirs, session.labels, compacted.inRange);
        row(`${session.name.slice(0, 22)} Claude Code's own`, score);
        add("Claude Code's own", score);
        details.push(`${session.name} (Claude Code's own, compacted earlier in the session): ${explain(score)}`);
      }
    }
  }
} finally {
  await daemon.dispose();
  rmSync(home, { recursive: true, force: true });
}

function explain(score) {
  const parts = [];
  const list = (name, items) => {
    if (items.length > 0) parts.push(`${name}: ${items.slice(0, 8).map((i) => JSON.stringify(String(i).slice(0, 90))).join(", ")}`);
  };
  list("requests missed", score.requests.missed);
  list("requests wrong", score.requests.wrong.map((w) => `${w.item} [${w.why}]`));
  list("constraints missed", score.constraints.missed);
  list("constraints wrong", score.constraints.wrong.map((w) => `${w.item} [${w.why}]`));
  list("open errors missed", score.unresolvedErrors.missed);
  list("blocked but fixed", score.resolvedAsBlocked);
  list("junk", score.junk.map((j) => `${j.line} [${j.why}]`));
  list("next steps contradicted", score.nextSteps.contradicted.map((c) => `${c.item} [${c.why}]`));
  list("files missed", score.files.missed);
  return parts.length > 0 ? `\n    ${parts.join("\n    ")}` : "all good";
}

const ratio = ([hit, of]) => ({ hit, of });
const value = (pair) => percent(ratio(pair)) ?? 100;
for (const [who, t] of totals) {
  const target = who === "extractive";
  const r = (name, pair, min) => {
    const held = target && min !== undefined ? { target: { min } } : {};
    report({ name: `${who}: ${name} (${pair[0]}/${pair[1]})`, value: value(pair), unit: "%", digits: 0, ...held });
  };
  r("requests recall", t.rr, TARGETS.requestsRecall);
  r("requests precision", t.rp, TARGETS.requestsPrecision);
  r("constraints recall", t.cr, TARGETS.constraintsRecall);
  r("constraints precision", t.cp, TARGETS.constraintsPrecision);
  r("unresolved errors recall", t.er, TARGETS.unresolvedRecall);
  const count = (name, n, max) => {
    report({ name: `${who}: ${name}`, value: n, unit: "items", digits: 0, ...(max !== undefined ? { target: { max } } : {}) });
  };
  count("fixed errors listed as blocked", t.fixedBlocked, target ? 0 : undefined);
  count("junk lines", t.junk, target ? 0 : undefined);
  count("Next Steps contradicted", t.contradicted, target ? 0 : undefined);
  // Repair must never add one; the summarizer's figure is in its precision above.
  count("items from a not list", t.notList, who === "one line + repair" ? 0 : undefined);
}

process.stdout.write(`${lines.join("\n")}\n`);
if (skipped.length > 0) process.stdout.write(`${skipped.join("\n")}\n`);
process.stdout.write(`${details.join("\n")}\n`);
if (!existsSync(corpus)) process.exitCode = 1;
