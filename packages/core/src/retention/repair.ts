/**
 * Repair (docs/retention.md "Repair"): what a summary lost of files, errors and constraints is
 * appended verbatim under `## Critical Context`, within a token budget, so a weak model or plugin
 * summary never drops them. The appended lines have fixed prefixes: a later summary that carries
 * them keeps them, and `carriedProbes` reads them back from a previous summary, so an item is
 * never appended twice and never lost by a later summarizer that ignores it.
 */
import { checkRetention, isKept, SummaryIndex, type RetentionReport } from "./check.js";
import { emptyProbes, type ProbeItem, type RetentionProbes } from "./probes.js";
import { clip } from "./text.js";
import { parseSummaryParts } from "./summary-parts.js";
import { readConstraint } from "./user-text.js";
import { capSummary as capAt, summaryCutNote, utf8ByteLength } from "../summary-cap.js";

const FILE_READ = "File read: ";
const FILE_MODIFIED = "File modified: ";
const ERROR = "Error";
const CONSTRAINT = "User constraint: ";
const REQUEST = "User request: ";
const EARLIER_REQUEST = "Earlier user request: ";
const REPAIR_LINE = /^- (File read: |File modified: |Error(?: \(([^)]*)\))?: |User constraint: |User request: |Earlier user request: )(.*)$/;
const CRITICAL_HEADING = /^## Critical Context\s*$/m;
const TRAILING_FILE_SECTIONS = /(?:\n\n<(read-files|modified-files)>\n[\s\S]*?\n<\/\1>)+$/;
const CHARS_PER_TOKEN = 4;

/** Tokens repair may add: a quarter of the summary's own budget, at least 1,024. */
export function repairBudgetTokens(summaryMaxTokens: number): number {
  return Math.max(1024, Math.floor(summaryMaxTokens / 4));
}

function unquote(text: string): string {
  const m = /^`(.*)`$/.exec(text.trim());
  return m ? m[1]! : text.trim();
}

/**
 * The probes a previous summary carries: the lines repair (or restoration, `restoreSummary`)
 * appended to it (under its Critical Context), its constraints that read as rules, its file lists (or the files another agent's
 * summary names). Checked again in the summary that replaces it, so a later summarizer cannot drop
 * them. Nothing else of another agent's summary is carried: its "errors and fixes" list is
 * history, and its analysis no item at all.
 */
export function carriedProbes(previousSummary: string | undefined): RetentionProbes {
  const probes = emptyProbes();
  if (!previousSummary) return probes;
  const item = (text: string, detail?: string): ProbeItem => ({ text, index: -1, ...(detail !== undefined ? { detail } : {}) });
  const parts = parseSummaryParts(previousSummary);
  for (const line of parts.critical) {
    const repaired = REPAIR_LINE.exec(`- ${line}`);
    if (!repaired) continue;
    const [, prefix, detail, text] = repaired;
    if (prefix === FILE_READ || prefix === FILE_MODIFIED) probes.files.push(item(unquote(text!), prefix === FILE_READ ? "read" : "modified"));
    else if (prefix === CONSTRAINT) probes.constraints.push(item(text!.trim()));
    else if (prefix === REQUEST || prefix === EARLIER_REQUEST) probes.requests.push(item(text!.trim()));
    // Repair writes an error line in backticks: any other "Error: …" is not one of its lines.
    else if (/^`.*`$/.test(text!.trim())) probes.errors.push(item(unquote(text!), detail));
  }
  for (const text of parts.constraints) {
    // Whoever wrote that section, only a sentence that reads as a rule is carried (and repaired).
    if (readConstraint(text) === "yes") probes.constraints.push(item(text));
  }
  for (const file of parts.files) probes.files.push(item(file.path, file.modified ? "modified" : "read"));
  return probes;
}

export interface RepairResult {
  summary: string;
  /** How many lines were appended, per kind. */
  added: { files: number; errors: number; constraints: number };
  /** Items that did not fit the budget. */
  skipped: number;
}

/**
 * Appends the missing files, errors still standing and constraints of `probes` to `summary` under
 * `## Critical Context` (created when absent), before any trailing file lists. Constraints first,
 * then errors, then modified and read files, while the budget lasts. Only what the probes are sure
 * of: the constraints are those the precise probe read as rules, and a fixed error is never added.
 * Idempotent: what the summary already holds is not appended again.
 */
export function repairSummary(summary: string, probes: RetentionProbes, budgetTokens: number): RepairResult {
  const { lines, added, skipped } = criticalLines(lostItems(summary, probes), budgetTokens * CHARS_PER_TOKEN);
  if (lines.length === 0) return { summary, added, skipped };
  return { summary: insertCritical(summary, lines), added, skipped };
}

/**
 * Repair of a summary another agent wrote (docs/retention.md "Restoring another agent's summary"),
 * against the probes of the messages it replaced: what `repairSummary` appends, and the human's
 * requests it lost, in their words on one line — the latest request of the range first
 * (`- User request: …`, the task going on at its cut), the earlier ones it lost last
 * (`- Earlier user request: …`, the most recent kept when the budget runs out).
 */
export function restoreSummary(summary: string, probes: RetentionProbes, budgetTokens: number): RepairResult {
  const index = new SummaryIndex(summary);
  const requests = [...probes.requests].sort((a, b) => a.index - b.index);
  const latest = requests.pop();
  const line = (prefix: string, item: ProbeItem): string => `- ${prefix}${item.text.replace(/\s+/g, " ").trim()}`;
  const current = latest && !isKept("requests", latest, index) ? line(REQUEST, latest) : undefined;
  let budget = budgetTokens * CHARS_PER_TOKEN - (current ? current.length + 1 : 0);
  const repaired = criticalLines(lostItems(summary, probes), Math.max(0, budget));
  budget -= repaired.lines.reduce((sum, text) => sum + text.length + 1, 0);
  const earlier: string[] = [];
  for (const item of requests.reverse()) {
    if (isKept("requests", item, index)) continue;
    const text = line(EARLIER_REQUEST, item);
    if (text.length + 1 > budget) break;
    budget -= text.length + 1;
    earlier.unshift(text);
  }
  const all = [...(current ? [current] : []), ...repaired.lines, ...earlier];
  if (all.length === 0) return { summary, added: repaired.added, skipped: repaired.skipped };
  return { summary: insertCritical(summary, all), added: repaired.added, skipped: repaired.skipped };
}

/** What repair restores: the constraints, standing errors and files (modified first) `summary` does not hold. */
export interface LostItems {
  constraints: ProbeItem[];
  errors: ProbeItem[];
  files: ProbeItem[];
}

export function lostItems(summary: string, probes: RetentionProbes): LostItems {
  const index = new SummaryIndex(summary);
  const files = probes.files.filter((item) => !isKept("files", item, index));
  files.sort((a, b) => Number(b.detail === "modified") - Number(a.detail === "modified"));
  return {
    constraints: probes.constraints.filter((item) => !isKept("constraints", item, index)),
    // A fixed error is history, not something to keep in mind as standing: the summarizer may tell it.
    errors: probes.errors.filter((item) => item.resolved !== true && !isKept("errors", item, index)),
    files,
  };
}

/**
 * The repair lines of `items` (`- User constraint: …`, ``- Error (cmd): `…` ``, ``- File modified: `…` ``),
 * constraints first, then errors, then files, while `budgetChars` lasts: the same lines repair
 * appends, and Claude Code's hooks hand over (docs/claude-code.md).
 */
export function criticalLines(items: LostItems, budgetChars: number): Omit<RepairResult, "summary"> & { lines: string[] } {
  const added = { files: 0, errors: 0, constraints: 0 };
  const lines: string[] = [];
  let budget = budgetChars;
  let skipped = 0;
  const push = (kind: keyof typeof added, line: string): void => {
    if (line.length + 1 > budget) {
      skipped++;
      return;
    }
    budget -= line.length + 1;
    lines.push(line);
    added[kind]++;
  };
  for (const item of items.constraints) push("constraints", `- ${CONSTRAINT}${item.text}`);
  for (const item of items.errors)
    push("errors", `- ${ERROR}${item.detail ? ` (${clip(item.detail.replace(/[()]/g, ""), 80)})` : ""}: \`${item.text}\``);
  for (const item of items.files) push("files", `- ${item.detail === "modified" ? FILE_MODIFIED : FILE_READ}\`${item.text}\``);
  return { lines, added, skipped };
}

/** Appends lines at the end of the first `## Critical Context` section (its "(none)" placeholder goes). */
function insertCritical(summary: string, lines: readonly string[]): string {
  const files = TRAILING_FILE_SECTIONS.exec(summary);
  const body = files ? summary.slice(0, files.index) : summary;
  const tail = files ? files[0] : "";
  const heading = CRITICAL_HEADING.exec(body);
  if (!heading) return `${body.trimEnd()}\n\n## Critical Context\n${lines.join("\n")}${tail}`;
  const sectionStart = heading.index + heading[0].length;
  const rest = body.slice(sectionStart);
  // The section ends at the next heading or the split-turn separator.
  const next = /\n(?=#{1,6}\s|---\s*$|\*\*Turn Context)/m.exec(rest);
  const sectionEnd = next ? sectionStart + next.index : body.length;
  const section = body
    .slice(sectionStart, sectionEnd)
    .split("\n")
    .filter((line) => !/^-\s*\((?:none|nothing)[^)]*\)\s*$/i.test(line.trim()));
  while (section.length > 0 && section[section.length - 1]!.trim() === "") section.pop();
  const rebuilt = [...section, ...lines].join("\n");
  const after = body.slice(sectionEnd);
  const before = rebuilt.startsWith("\n") ? "" : "\n";
  const between = after.length > 0 && !after.startsWith("\n\n") ? "\n" : "";
  return `${body.slice(0, sectionStart)}${before}${rebuilt}${between}${after}${tail}`;
}

/**
 * Checks, repairs when asked, caps to `maxBytes` (`limits.maxSummaryBytes`, or the summary budget
 * of the model's window, which `limitName` names in the cut note), and reports on the text as
 * stored. Repair lengthens the summary, so a summary near the cap has its body cut first
 * to leave room for the repair lines (never the repair lines cut after): the stored text carries
 * at most one cut note, and every item the report counts as kept is in it.
 */
export function retainSummary(
  summary: string,
  probes: RetentionProbes,
  options: { repair: boolean; budgetTokens: number; maxBytes: number; limitName?: string },
): { summary: string; retention: RetentionReport } {
  const { maxBytes, limitName } = options;
  const capSummary = (text: string, bytes: number, limitBytes = bytes): string => capAt(text, bytes, limitBytes, limitName);
  if (!options.repair) {
    const stored = capSummary(summary, maxBytes);
    return { summary: stored, retention: checkRetention(stored, probes) };
  }
  let body = capSummary(summary, maxBytes);
  // Each round cuts the body by what the repaired text overshoots; a cut body may lose items that
  // repair then adds back, hence a few rounds.
  for (let round = 0; round < 4; round++) {
    const repaired = repairSummary(body, probes, options.budgetTokens);
    const over = utf8ByteLength(repaired.summary) - maxBytes;
    if (over <= 0)
      return { summary: repaired.summary, retention: { ...checkRetention(repaired.summary, probes), repaired: repaired.added } };
    const room = utf8ByteLength(body) - over;
    if (room <= utf8ByteLength(summaryCutNote(maxBytes, limitName))) break;
    body = capSummary(summary, room, maxBytes);
  }
  // The repair lines alone do not fit: the cap cuts them, and the report counts what is left.
  const repaired = repairSummary(body, probes, options.budgetTokens);
  const stored = capSummary(repaired.summary, maxBytes);
  const before = checkRetention(body, probes);
  const after = checkRetention(stored, probes);
  const gained = (kind: "files" | "errors" | "constraints"): number => Math.max(0, after[kind].kept - before[kind].kept);
  return {
    summary: stored,
    retention: { ...after, repaired: { files: gained("files"), errors: gained("errors"), constraints: gained("constraints") } },
  };
}

/**
 * A summary entry's `details` with the report added as `retention`: an object keeps its other
 * fields (file lists, summarizer, a plugin's own data), absent details become `{ retention }`.
 * Details of another shape (a plugin's array or string) are left as they are: the report is then
 * only in the reply.
 */
export function detailsWithRetention(details: unknown, retention: RetentionReport): unknown {
  if (details === undefined) return { retention };
  if (typeof details === "object" && details !== null && !Array.isArray(details))
    return { ...(details as Record<string, unknown>), retention };
  return details;
}
