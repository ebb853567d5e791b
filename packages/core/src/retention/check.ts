/**
 * Checking a summary against probes (docs/retention.md "Matching"): which items it kept.
 *
 * - files: the path as written, or a suffix of it with at least one directory
 *   (`/srv/api/src/auth.ts` is kept by `src/auth.ts`, not by `auth.ts` alone), bounded by
 *   characters that cannot be part of a path;
 * - errors: the start of the error line (first 100 characters), after normalizing;
 * - requests (their first sentence, the ask), constraints, plan: one line of the summary holds the
 *   start of the item (first 80 characters) or three quarters of its distinctive words, compared
 *   by their first five letters (a model may reword).
 *
 * Normalizing: lower case, quotes, backticks and emphasis removed, whitespace collapsed.
 */
import { sentences } from "./text.js";
import { PROBE_KINDS, type ProbeItem, type ProbeKind, type RetentionProbes } from "./probes.js";

export interface KindCount {
  kept: number;
  total: number;
}

export interface RetentionReport {
  files: KindCount;
  errors: KindCount;
  requests: KindCount;
  constraints: KindCount;
  plan: KindCount;
  /** The items the summary lost, per kind (at most MAX_MISSING each; counts stay exact). */
  missing: Record<ProbeKind, string[]>;
  /** How many items repair appended under "## Critical Context" (absent when repair is off). */
  repaired?: { files: number; errors: number; constraints: number };
  /**
   * What the probes saw but could not judge, so the counts above do not cover it: user messages
   * that may or may not ask for work, sentences with a rule's words that may not be rules.
   */
  unjudged?: { requests: number; constraints: number };
}

export const MAX_MISSING = 50;
const ERROR_PREFIX = 100;
const TEXT_PREFIX = 80;
const MAX_WORDS = 12;
const WORD_SHARE = 0.75;

const STOPWORDS = new Set(
  "that this with from into have will would should could there their them then than when what which where while were your about also just only make sure please need want like some more most other these those each such been being does done doing after before because using used over under again here very much many".split(
    " ",
  ),
);

export function normalizeForMatch(text: string): string {
  return text
    .toLowerCase()
    .replace(/[`*_"'“”‘’…]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

function distinctiveWords(text: string): string[] {
  const words = normalizeForMatch(text)
    .split(/[^a-z0-9./-]+/)
    .map((w) => w.replace(/^[./-]+|[./-]+$/g, ""))
    .filter((w) => w.length >= 4 && !STOPWORDS.has(w));
  return [...new Set(words.map(stem))].slice(0, MAX_WORDS);
}

/** A crude stem, enough to match "refactor" with "refactored" and "total" with "totals". */
function stem(word: string): string {
  return word.length > 5 ? word.slice(0, 5) : word;
}

/** A summary prepared for checking many items against it. */
export class SummaryIndex {
  readonly raw: string;
  readonly normalized: string;
  readonly lines: { text: string; words: Set<string> }[];

  constructor(summary: string) {
    this.raw = summary;
    this.normalized = normalizeForMatch(summary);
    this.lines = summary
      .split("\n")
      .map((line) => normalizeForMatch(line))
      .filter((line) => line.length > 0)
      .map((text) => ({ text, words: new Set(text.split(/[^a-z0-9./-]+/).map((w) => stem(w.replace(/^[./-]+|[./-]+$/g, "")))) }));
  }
}

const PATH_CHAR = /[\w@/.~+-]/;

function containsBounded(haystack: string, needle: string): boolean {
  let from = 0;
  for (;;) {
    const at = haystack.indexOf(needle, from);
    if (at < 0) return false;
    const before = at === 0 ? "" : haystack[at - 1]!;
    const after = haystack[at + needle.length] ?? "";
    // A path may end a sentence: "…in src/a.ts." — a dot followed by a non-path character is fine.
    const afterOk = after === "" || !PATH_CHAR.test(after) || (after === "." && !PATH_CHAR.test(haystack[at + needle.length + 1] ?? " "));
    if ((before === "" || !PATH_CHAR.test(before)) && afterOk) return true;
    from = at + 1;
  }
}

/** The path, and its suffixes that still name a directory. */
function pathForms(path: string): string[] {
  const bare = path.replace(/^\.\//, "").replace(/\/+$/, "");
  const forms = [bare];
  const parts = bare.split("/").filter((p) => p.length > 0);
  for (let i = 1; i < parts.length - 1; i++) forms.push(parts.slice(i).join("/"));
  return forms;
}

function keptFile(index: SummaryIndex, path: string): boolean {
  return pathForms(path).some((form) => form.length > 0 && containsBounded(index.raw, form));
}

function keptError(index: SummaryIndex, line: string): boolean {
  const needle = normalizeForMatch(line).slice(0, ERROR_PREFIX).trim();
  return needle.length > 0 && index.normalized.includes(needle);
}

function keptText(index: SummaryIndex, text: string): boolean {
  const start = normalizeForMatch(text).slice(0, TEXT_PREFIX).trim();
  if (start.length > 0 && index.normalized.includes(start)) return true;
  const words = distinctiveWords(text);
  if (words.length < 2) return false;
  const needed = Math.ceil(words.length * WORD_SHARE);
  return index.lines.some((line) => {
    let found = 0;
    for (const word of words) if (line.words.has(word) && ++found >= needed) return true;
    return false;
  });
}

export function isKept(kind: ProbeKind, item: ProbeItem, summary: string | SummaryIndex): boolean {
  const index = typeof summary === "string" ? new SummaryIndex(summary) : summary;
  if (kind === "files") return keptFile(index, item.text);
  if (kind === "errors") return keptError(index, item.text);
  // A request is kept when its ask (the first sentence) is; its details may be elsewhere.
  if (kind === "requests") return keptText(index, sentences(item.text)[0] ?? item.text);
  return keptText(index, item.text);
}

/** Kept / total per kind and the missing items. */
export function checkRetention(summary: string, probes: RetentionProbes): RetentionReport {
  const index = new SummaryIndex(summary);
  const missing = { files: [], errors: [], requests: [], constraints: [], plan: [] } as Record<ProbeKind, string[]>;
  const counts = {} as Record<ProbeKind, KindCount>;
  for (const kind of PROBE_KINDS) {
    let kept = 0;
    for (const item of probes[kind]) {
      if (isKept(kind, item, index)) kept++;
      else if (missing[kind].length < MAX_MISSING) missing[kind].push(item.text);
    }
    counts[kind] = { kept, total: probes[kind].length };
  }
  return { ...counts, missing, ...(probes.unjudged ? { unjudged: { ...probes.unjudged } } : {}) };
}

/** "kept 41/41 files, 6/7 errors, 9/9 constraints, 5/6 requests, 1/1 plan" (kinds with nothing to keep are left out). */
export function formatRetention(
  report: Pick<RetentionReport, ProbeKind> & { repaired?: RetentionReport["repaired"]; unjudged?: RetentionReport["unjudged"] },
): string {
  const names: Record<ProbeKind, string> = {
    files: "files",
    errors: "errors",
    constraints: "constraints",
    requests: "requests",
    plan: "plan",
  };
  const order: ProbeKind[] = ["files", "errors", "constraints", "requests", "plan"];
  const parts = order.filter((kind) => report[kind].total > 0).map((kind) => `${report[kind].kept}/${report[kind].total} ${names[kind]}`);
  let line = parts.length > 0 ? `kept ${parts.join(", ")}` : "nothing to keep";
  const repaired = report.repaired ? report.repaired.files + report.repaired.errors + report.repaired.constraints : 0;
  if (repaired > 0) line += ` (repair added ${repaired} item${repaired === 1 ? "" : "s"})`;
  // What the counts do not cover, so "9/9 constraints" is not read as more than it is.
  const notJudged = report.unjudged;
  if (notJudged && notJudged.requests + notJudged.constraints > 0) {
    const parts = [
      notJudged.requests > 0 ? `${notJudged.requests} user message${notJudged.requests === 1 ? "" : "s"}` : "",
      notJudged.constraints > 0 ? `${notJudged.constraints} rule-like sentence${notJudged.constraints === 1 ? "" : "s"}` : "",
    ].filter((p) => p.length > 0);
    line += `; not judged: ${parts.join(", ")}`;
  }
  return line;
}
