/**
 * Lines a summary should never hold as items (docs/retention.md "Junk"): code, minified source
 * or base64, headings written as items, and items that say nothing. Inline code spans are allowed
 * (a path, an error line, a command in backticks is exactly what a summary should copy); the
 * test is on the prose around them, except for long unbroken runs, which are junk anywhere.
 */

const CODE_START =
  /^(?:import|export|const|let|var|function|class|interface|return|if|for|while|def|from|#include|package|public|private|async function|module\.exports)\b.*[;{=(:]/;
const CODE_SHAPE = /(?:=>|[;{}]\s*$|^\s*[})\]]|\w\([^)]*\)\s*[{;]|^\s*\/\/|^\s*<\/?\w+[^>]*>\s*$)/;
const EMPTY_ITEM = /^(?:[✓✔✅☑️*•\-\s.!:]*)(?:done|ok|finished|complete|completed|fixed|yes|no|n\/a)?[.!:]*$/i;
const PLACEHOLDER = /^\((?:none|not stated|none recorded|nothing)[^)]*\)$|^\(the request is before this part of the turn\)$/i;
const LONG_RUN = 60;

export type JunkKind = "code" | "data" | "heading" | "empty";

/** Why an item line is junk, or undefined when it is fine. `line` is the item without its list marker. */
export function junkKind(line: string): JunkKind | undefined {
  const item = line.trim();
  if (PLACEHOLDER.test(item)) return undefined;
  if (EMPTY_ITEM.test(item)) return "empty";
  if (hasLongRun(item)) return "data";
  const prose = item.replace(/`[^`]*`/g, "`…`").trim();
  if (/^#{1,6}\s/.test(prose) || /^\*\*[^*]+\*\*:?$/.test(prose) || /:$/.test(prose)) return "heading";
  if (CODE_START.test(prose) || CODE_SHAPE.test(prose) || symbolDense(prose)) return "code";
  return undefined;
}

function hasLongRun(text: string): boolean {
  for (const run of text.split(/[\s`]+/)) {
    if (run.length < LONG_RUN || run.includes("://")) continue;
    // A long path is fine; base64 and minified code are not.
    if (/^[\w@./~-]+$/.test(run) && run.includes("/") && run.split("/").every((part) => part.length <= 40)) continue;
    return true;
  }
  return false;
}

function symbolDense(text: string): boolean {
  if (text.length < 24) return false;
  let symbols = 0;
  for (const ch of text) if ("{}();=<>[]|&$".includes(ch)) symbols++;
  return symbols / text.length > 0.12;
}

/** Item lines of a summary in the structured format: list items and the Goal's paragraph lines. */
export function summaryItems(summary: string): string[] {
  const items: string[] = [];
  let inFileList = false;
  for (const raw of summary.split("\n")) {
    const line = raw.trim();
    if (/^<(read-files|modified-files)>$/.test(line)) inFileList = true;
    if (inFileList) {
      if (/^<\/(read-files|modified-files)>$/.test(line)) inFileList = false;
      continue;
    }
    if (line.length === 0 || /^#{1,6}\s/.test(line) || line === "---" || /^\*\*Turn Context/.test(line)) continue;
    items.push(line.replace(/^(?:[-*+]\s+|\d+[.)]\s+)(?:\[[ xX]\]\s+)?/, ""));
  }
  return items;
}

/** The junk lines of a summary, with why. */
export function junkLines(summary: string): { line: string; kind: JunkKind }[] {
  const out: { line: string; kind: JunkKind }[] = [];
  for (const line of summaryItems(summary)) {
    const kind = junkKind(line);
    if (kind) out.push({ line, kind });
  }
  return out;
}
