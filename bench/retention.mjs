// What summaries keep (docs/retention.md): the extractive summarizer on the retention corpus
// (examples/sessions/corpus), per kind the share of probed items kept, and junk lines per summary.
// Targets are the ones the corpus test holds: files 100 %, errors ≥ 95 %, constraints ≥ 90 %,
// requests ≥ 90 %, no junk line. Then the same sessions summarized as a weak model would (one line)
// and repaired: files, errors still standing and constraints must be 100 % (a fixed error is history:
// repair never appends it, docs/retention.md "Repair").
// Runs against the built daemon: `pnpm build && node bench/retention.mjs`.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkRetention, junkLines, PROBE_KINDS, probeMessages, repairSummary } from "../packages/core/dist/index.js";
import { piSessionMessages } from "../packages/daemon/dist/sessions/index.js";
import { extractiveSummary } from "../packages/daemon/dist/summarizer/index.js";
import { report } from "./lib/report.mjs";

const CORPUS = join(dirname(fileURLToPath(import.meta.url)), "..", "examples", "sessions", "corpus");
const TARGETS = { files: 100, errors: 95, constraints: 90, requests: 90 };

const sessions = readdirSync(CORPUS)
  .filter((name) => name.endsWith(".jsonl"))
  .sort()
  .map((name) => ({ name, messages: piSessionMessages(readFileSync(join(CORPUS, name), "utf8")) }));

function shares(summaries, { standingErrorsOnly = false } = {}) {
  const totals = Object.fromEntries(PROBE_KINDS.map((kind) => [kind, { kept: 0, total: 0 }]));
  let junk = 0;
  const missing = [];
  for (const { name, messages, summary } of summaries) {
    const all = probeMessages(messages);
    const probes = standingErrorsOnly ? { ...all, errors: all.errors.filter((error) => error.resolved !== true) } : all;
    const checked = checkRetention(summary, probes);
    for (const kind of PROBE_KINDS) {
      totals[kind].kept += checked[kind].kept;
      totals[kind].total += checked[kind].total;
      for (const item of checked.missing[kind]) missing.push(`${name} ${kind}: ${item}`);
    }
    junk += junkLines(summary).length;
  }
  return { totals, junk, missing };
}

const percent = ({ kept, total }) => (total === 0 ? 100 : (100 * kept) / total);

const extractive = shares(
  sessions.map((s) => ({ ...s, summary: extractiveSummary({ kind: "history", messages: s.messages, maxTokens: 13_107 }) })),
);
for (const kind of PROBE_KINDS) {
  const t = extractive.totals[kind];
  report({
    name: `extractive: ${kind} kept (${t.kept}/${t.total})`,
    value: percent(t),
    unit: "%",
    digits: 0,
    ...(TARGETS[kind] !== undefined ? { target: { min: TARGETS[kind] } } : {}),
  });
}
report({
  name: `extractive: junk lines per summary (${sessions.length} sessions)`,
  value: extractive.junk / sessions.length,
  unit: "lines",
  digits: 2,
  target: { max: 0 },
});

const weak = shares(
  sessions.map((s) => ({
    ...s,
    summary: repairSummary("The user and the assistant worked on the code.", probeMessages(s.messages), 4096).summary,
  })),
  { standingErrorsOnly: true },
);
for (const kind of ["files", "errors", "constraints"]) {
  const t = weak.totals[kind];
  report({
    name: `one-line summary + repair: ${kind === "errors" ? "errors still standing" : kind} kept (${t.kept}/${t.total})`,
    value: percent(t),
    unit: "%",
    digits: 0,
    target: { min: 100 },
  });
}
if (extractive.missing.length > 0)
  process.stdout.write(`lost by the extractive summarizer:\n${extractive.missing.map((m) => `  ${m}`).join("\n")}\n`);
