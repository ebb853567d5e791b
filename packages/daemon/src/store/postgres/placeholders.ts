/**
 * The store's SQL uses SQLite's placeholders: positional `?` and named `@name`. PostgreSQL's are
 * `$1`, `$2`, …; this rewrites one into the other, leaving alone what only looks like a
 * placeholder: string literals ('…', E'…' with backslash escapes, $tag$…$tag$), quoted
 * identifiers ("…"), comments (-- and nested /* *\/), and operators built with `@` or `?`'s
 * neighbours (`@@`, `@>`, `<@`). Casts (`?::int`) keep their `::`.
 */

/** Where the value of each `$n` comes from: a positional index (of the `?`s), or a name (of `@name`). */
export type ParameterSource = number | string;

export interface RewrittenSql {
  text: string;
  /** `sources[n - 1]` gives the value of `$n`. */
  sources: ParameterSource[];
  /** How many `?` placeholders there are. */
  positionalCount: number;
  /** The `@name` placeholders, each once, in order of first use. */
  names: string[];
}

const IDENTIFIER_START = /[A-Za-z_\u0080-\uffff]/;
const IDENTIFIER_PART = /[A-Za-z0-9_$\u0080-\uffff]/;

export function rewritePlaceholders(sql: string): RewrittenSql {
  const sources: ParameterSource[] = [];
  const numberOfName = new Map<string, number>();
  let positionalCount = 0;
  let out = "";
  let i = 0;
  const n = sql.length;

  /** Copies `sql[i..end)` unchanged and moves on. */
  const copyTo = (end: number) => {
    out += sql.slice(i, end);
    i = end;
  };

  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    const previous = i > 0 ? sql[i - 1]! : "";
    if (c === "'") {
      // E'…' (an escape string) lets a backslash escape the quote; other strings only double it.
      const escapes = (previous === "E" || previous === "e") && !(i > 1 && IDENTIFIER_PART.test(sql[i - 2]!));
      copyTo(endOfQuoted(sql, i, "'", escapes));
    } else if (c === '"') {
      copyTo(endOfQuoted(sql, i, '"', false));
    } else if (c === "-" && next === "-") {
      const newline = sql.indexOf("\n", i);
      copyTo(newline < 0 ? n : newline);
    } else if (c === "/" && next === "*") {
      copyTo(endOfBlockComment(sql, i));
    } else if (c === "$" && !IDENTIFIER_PART.test(previous)) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(sql.slice(i));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        copyTo(close < 0 ? n : close + tag[0].length);
      } else {
        copyTo(i + 1);
      }
    } else if (c === "?") {
      sources.push(positionalCount++);
      out += `$${sources.length}`;
      i++;
    } else if (c === "@" && next !== undefined && IDENTIFIER_START.test(next) && previous !== "@" && previous !== "<") {
      let end = i + 1;
      while (end < n && IDENTIFIER_PART.test(sql[end]!) && sql[end] !== "$") end++;
      const name = sql.slice(i + 1, end);
      let number = numberOfName.get(name);
      if (number === undefined) {
        sources.push(name);
        number = sources.length;
        numberOfName.set(name, number);
      }
      out += `$${number}`;
      i = end;
    } else if (IDENTIFIER_PART.test(c)) {
      // A whole word at once: `$` inside an identifier (foo$bar) is not a dollar quote.
      let end = i + 1;
      while (end < n && IDENTIFIER_PART.test(sql[end]!)) end++;
      copyTo(end);
    } else {
      copyTo(i + 1);
    }
  }
  return { text: out, sources, positionalCount, names: [...numberOfName.keys()] };
}

/** The index just past the quoted text that starts at `start` (unterminated: the end of the SQL). */
function endOfQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (backslashEscapes && c === "\\") i += 2;
    else if (c === quote && sql[i + 1] === quote) i += 2;
    else if (c === quote) return i + 1;
    else i++;
  }
  return sql.length;
}

/** Block comments nest in PostgreSQL. */
function endOfBlockComment(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql[i] === "/" && sql[i + 1] === "*") {
      depth++;
      i += 2;
    } else if (sql[i] === "*" && sql[i + 1] === "/") {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return sql.length;
}
