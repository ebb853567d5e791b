/**
 * Lines a summary should never hold as items (docs/retention.md "Junk"): code (a statement, a
 * definition, a match arm, a block's opening or closing line, in any language), minified source
 * or base64, file trees drawn as text, stack frames, headings written as items, and items that
 * say nothing. Inline code spans are allowed (a path, an error line, a command in backticks is
 * exactly what a summary should copy); the test is on the prose around them, except for long
 * unbroken runs, which are junk anywhere.
 */

/** The first line of a statement, with the shape code has after its keyword (English starts the same words). */
const CODE_START = [
  /^(?:import|export)\s+(?:\{|\*|type\s|default\s|[\w$]+\s+from\s|[\w$]+\s*,|["'])/,
  /^(?:const|let|var)\s+[\w${}[\], ]+\s*=/,
  /^(?:async\s+)?function\s*[\w$]*\s*\(/,
  /^(?:class|interface)\s+\w+(?:\s+(?:extends|implements)\s+[\w.<>, ]+)?\s*\{/,
  /^(?:if|for|while|switch|catch)\s*\(/,
  /^return\b.*;$/,
  /^def\s+\w+\s*\(/,
  /^from\s+[\w.]+\s+import\s/,
  /^#include\s*[<"]/,
  /^package\s+[\w.]+;?$/,
  /^module\.exports\b/,
  /^(?:public|private|protected)\s+(?:static\s+)?[\w<>[\]]+\s+\w+\s*[({=;]/,
];
const CODE_SHAPE = /(?:=>|[;{}]\s*$|^\s*[})\]]|\w\([^)]*\)\s*[{;]|^\s*\/\/|^\s*<\/?\w+[^>]*>\s*$)/;
const EMPTY_ITEM = /^(?:[✓✔✅☑️*•\-\s.!:]*)(?:done|ok|finished|complete|completed|fixed|yes|no|n\/a)?[.!:]*$/i;
const PLACEHOLDER = /^\((?:none|not stated|none recorded|nothing)[^)]*\)$|^\(the request is before this part of the turn\)$/i;
const LONG_RUN = 60;

/** Box-drawing characters and ASCII trees (`├──`, `│`, `└──`, `|--`, `+--`): a file tree drawn as text. */
const TREE = /[│├└┌┐┘┬┴┼]|(?:^|\s)[|`+]--\s/;
/** Where an error was thrown, not what it says: a JavaScript frame, a Python traceback line, a bare `file:line:col`. */
const STACK_FRAME = /^(?:at\s+(?:async\s+)?[\w.$<>[\]]+\s*\(|at\s+\S+:\d+:\d+\)?$|File ".*", line \d+|\(?[\w./@\\[\]-]+:\d+(?::\d+)?\)?$)/;
/**
 * Lines of source in the languages agents write: a definition (`defp name(x) do`, `fn main() {`),
 * a declaration, a match arm (`_ -> nil`, `{:ok, x} ->`), a line opening or closing a block
 * (`… do`, `end`, `})`), an atom or attribute alone (`:ok`, `@spec …`), an import, an assignment.
 */
const CODE_LINES = [
  /^(?:defp?|defmodule|defmacro|defimpl|fn|pub(?:\(crate\))?\s+fn|func|fun|struct|impl|enum|trait|module|type)\s+[\w.:<>]+\s*(?:[({<=:]|do\b)/,
  /^(?:val|mut)\s+[\w{}[\], ]+\s*[:=]/,
  // A match arm: a single pattern (`_`, `nil`, `{:ok, x}`, `[h | t]`, `"x"`), an arrow, a result.
  /^(?:[\w.:@$]+|\{[^}]*\}|\[[^\]]*\]|\([^)]*\)|"[^"]*")(?:\s+when\s+.+)?\s*(?:->|=>)(?:\s*\S|$)/,
  // A block opened at the end of the line (`… do`, `{`, `(`, `[`) or closed alone (`end`, `})`).
  /[{([]$|\)\s*:$|^(?:end|[})\]]+)[;,)]*$/,
  /^(?=.*[:("_.(])(?:\S+\s+){0,5}do:?$|^\S+\s+do:?$/,
  // A literal on its own line (`{:dep, "~> 1.0"},`, `["a", "b"]`).
  /^[{[].*[}\]],?$/,
  /^[@:]\w+(?:\s|$)/,
  /^[a-z_][\w.]*\s*(?:=|\+=|:=|<-)\s*[\w"'[{(.:]/,
  /^(?:require|use|alias)\s+[A-Z][\w.]*$/,
  /^(?:case|cond|with|match)\s+.*[(:=<].*\s(?:do|\{)$/,
];

export type JunkKind = "code" | "data" | "heading" | "empty" | "tree" | "stack frame";

/** Why an item line is junk, or undefined when it is fine. `line` is the item without its list marker. */
export function junkKind(line: string): JunkKind | undefined {
  const item = line.trim();
  if (PLACEHOLDER.test(item)) return undefined;
  if (EMPTY_ITEM.test(item)) return "empty";
  if (hasLongRun(item)) return "data";
  const prose = item.replace(/`[^`]*`/g, "`…`").trim();
  if (/^#{1,6}\s/.test(prose) || /^\*\*[^*]+\*\*:?$/.test(prose) || /:$/.test(prose)) return "heading";
  if (TREE.test(item)) return "tree";
  if (STACK_FRAME.test(item)) return "stack frame";
  if (CODE_START.some((pattern) => pattern.test(prose)) || CODE_SHAPE.test(prose) || symbolDense(prose)) return "code";
  // The item without the label a summary puts before it ("Decision: …"), in case it is a line of source.
  const bare = item.replace(/^[A-Z][\w ]{0,30}(?:\([^)]*\))?:\s+/, "");
  if (CODE_LINES.some((pattern) => pattern.test(bare))) return "code";
  return undefined;
}

function hasLongRun(text: string): boolean {
  for (const word of text.split(/[\s`]+/)) {
    // A path in parentheses or before a colon ("(C:/Users/[USER]/x.py):") is a path: its punctuation is not part of it.
    const run = word.replace(/^[("'<]+|[)"'>,.:;]+$/g, "");
    if (run.length < LONG_RUN || run.includes("://")) continue;
    // A long path is fine (a redacted part such as `[USER]` too); base64 and minified code are not.
    if (/^[\w@./~:[\]%+\\-]+$/.test(run) && /[/\\]/.test(run) && run.split(/[/\\]/).every((part) => part.length <= 40)) continue;
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
