/**
 * Which outputs are errors, and the line that names each one (docs/retention.md "Errors").
 *
 * An error is a tool result flagged `isError`, a command that exited non-zero, a stack trace in
 * any output, or a model call that failed. Not every non-zero exit is a failure: a search that
 * found nothing (grep exits 1), `test`/`[`, `diff` reporting differences and `sleep` interrupted
 * by a timeout all exit non-zero as designed; they are not errors unless the output says one.
 */
import { shellSegments } from "./resolution.js";
import { clip } from "./text.js";

/** Programs whose exit status 1 is an answer ("no match", "false", "different"), not a failure. */
const ANSWERING_PROGRAMS = new Set([
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "ag",
  "ack",
  "git-grep",
  "test",
  "[",
  "[[",
  "diff",
  "cmp",
  "pgrep",
  "sleep",
  "false",
]);

/** Programs that only look: a missing file is their answer, not a failure of the work. */
const LOOKUP_PROGRAMS = new Set(["grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep", "ls", "find", "cat", "head", "tail", "stat", "file", "wc"]);

/** Output whose every line says a file or folder does not exist (plus the tool's exit note). */
function onlyMissingFiles(output: string): boolean {
  const lines = head(output).filter((line) => !/^(?:command )?exited with (?:code|status) \d+$/i.test(line.trim()));
  return lines.length > 0 && lines.every((line) => /no such file or directory|cannot access|not found/i.test(line));
}

/** Outputs of search tools that found nothing. */
const NOTHING_FOUND = /^(?:no (?:matches|results|files|match)(?: found)?|0 (?:matches|results)|nothing found|no such pattern)\b/i;

// The line that names an error: a typed exception or an "error" word, then weaker signals.
// Case matters for the typed names (`TypeError`, `ENOENT`); "exited" is not an errno.
const STRONG_ERROR_WORD = /\berror\b|\bpanic(?:ked)?\b|\bfatal\b|\bsegmentation fault\b/i;
// No leading \w*: that pattern backtracks at every position of a long line.
const STRONG_ERROR_NAME = /(?:Error|Exception)\b|\bE[A-Z]{3,}\b/;
const STRONG_ERROR = { test: (line: string): boolean => STRONG_ERROR_WORD.test(line) || STRONG_ERROR_NAME.test(line) };
const WEAK_ERROR = /\b(?:failed|failure|FAIL|cannot|can't|could not|not found|no matches found|no such file|denied|refused|timed? ?out|assertion)\b/i;
/** A compiler or linter diagnostic: `path:line[:col]: message`. */
const DIAGNOSTIC = /^\s*[\w./@-]+:\d+(?::\d+)?:\s+\S/;
const STACK_FRAME = /^\s+at\s+\S.*(?:\(.*:\d+(?::\d+)?\)|:\d+:\d+)\s*$/;
const PY_TRACEBACK = /^Traceback \(most recent call last\):/;
const PY_ERROR_LINE = /^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b.*$/;
/** Longest run without spaces kept in an error line; longer runs are minified code or data. */
const MAX_RUN = 60;
/** An error line is kept up to this many characters (the probe and the summaries use the same cut). */
export const ERROR_LINE_MAX = 200;

/** The program a shell command's exit status comes from: the last one of `a && b`, `a; b`, `a | b`. */
export function commandProgram(command: string): string {
  // Quotes kept whole: `grep "a\|b" file` is one grep, not a pipe.
  const last = shellSegments(command).pop()?.text ?? "";
  // Skip variable assignments, `env`, `sudo`, `time`, `timeout N`.
  const words = last.split(/\s+/).filter((w) => !/^\w+=/.test(w));
  while (words.length > 0 && /^(?:env|sudo|time|nice|timeout|exec|npx|xargs)$/.test(words[0]!)) {
    words.shift();
    if (words.length > 0 && /^\d+[smh]?$/.test(words[0]!)) words.shift();
  }
  const program = words[0] ?? "";
  if (program === "git" && words[1] === "grep") return "git-grep";
  return program.replace(/^.*\//, "");
}

/** A command that only waits (`sleep 5`, `sleep 5 && echo done`). */
export function isSleep(command: string): boolean {
  return commandProgram(command) === "sleep" || /^\s*sleep\b/.test(command);
}

/**
 * A command that exited non-zero as designed: an answering program with status 1 and no error
 * line in its output, or any `sleep`.
 */
export function exitedAsDesigned(command: string, exitCode: number, output: string): boolean {
  const program = commandProgram(command);
  if (isSleep(command)) return true;
  // A lookup of a file that is not there (`grep x missing.ts`, `ls dir/`): an answer, nothing to fix.
  if (LOOKUP_PROGRAMS.has(program) && onlyMissingFiles(output)) return true;
  if (!ANSWERING_PROGRAMS.has(program) || exitCode !== 1) return false;
  return !hasStrongErrorLine(output);
}

function hasStrongErrorLine(text: string): boolean {
  for (const line of head(text)) if (STRONG_ERROR.test(line)) return true;
  return false;
}

/** A tool result that only says "found nothing". */
export function foundNothing(text: string): boolean {
  const first = text.trim().split("\n", 1)[0] ?? "";
  return first.length === 0 || NOTHING_FOUND.test(first);
}

/**
 * Output whose own first line is an error line: `TypeError: cannot read property 'amount' of
 * undefined`, `error: …`, `fatal: …`, `panic: …`, `ENOENT: …`, `<tool_use_error>…`. A tool result
 * like that failed, whether or not the agent flagged it.
 */
export function startsWithErrorLine(text: string): boolean {
  const first = text.trimStart().split("\n", 1)[0]!.trim();
  return /^(?:(?:[A-Z][A-Za-z]*)?(?:Error|Exception)(?:\s*\[[^\]]*\])?:\s|error(?:\[\w+\])?:\s|fatal:\s|panic:\s|E[A-Z]{3,}:\s|<tool_use_error>|Traceback \(most recent call last\))/.test(
    first,
  );
}

/**
 * The first line of an output that opens with an error word (`Error processing a.jsonl: bad
 * escape`, `ERROR: …`, `fatal: …`, also after `Warning: `) or is a log record at an error level:
 * a program reporting failures while exiting 0. Read only for commands that change or run
 * something (a look-up's output is content, a search's matches too).
 */
export function reportedErrorLine(output: string): string | undefined {
  // A cheap gate before reading lines (a terminal's colour code may stand right before the word).
  if (!/Error|ERROR|error|FATAL|Fatal|fatal|CRITICAL|panic|Traceback/.test(output)) return undefined;
  for (const line of head(output)) {
    if (REPORTED_ERROR.test(line)) return tidyErrorLine(line);
    const logged = LOG_ERROR.exec(line);
    if (logged) return tidyErrorLine(logged[1]!);
  }
  return undefined;
}

/**
 * A line opening with an error word, also under a warning's label (`Warning: Error processing
 * a.jsonl: bad escape`: the program went on, the error stands).
 */
const REPORTED_ERROR =
  /^\s*(?:(?:Warning|WARNING|warning|WARN):\s+)?(?:(?:Error|ERROR|FATAL|Fatal)\b[\s:]|error(?:\[\w+\])?:\s|fatal:\s|panic:\s|Traceback \(most recent call last\))/;

/**
 * A log record at an error level, its timestamp first or not (`2026-01-01T08:33:15Z ERROR app::rapl:
 * read failed`, `[ERROR] read failed`, `12:01:02 FATAL db: gone`): its message, without the logger's name.
 */
const LOG_ERROR = /^\s*(?:\[?(?:\d{4}-\d\d-\d\d[T ])?\d\d:\d\d:\d\d[\d.,]*(?:Z|[+-]\d\d:?\d\d)?\]?\s+)?\[?(?:ERROR|FATAL|CRITICAL)\]?\s+(?:[\w.:-]+:\s+)?(\S.*)$/;

/** The harness's note of an exit status ("Exit code 124", "exited with code 1"): a status, not a message. */
export function isExitNote(line: string): boolean {
  return EXIT_NOTE.test(line.trim());
}

/**
 * The line saying a privileged command could not ask for the user's password (`sudo: a terminal is
 * required to read the password`, `sudo: a password is required`): the agent cannot do it, the user can.
 */
export function passwordLine(output: string): string | undefined {
  const line = head(output).find((l) => NEEDS_PASSWORD.test(l));
  return line === undefined ? undefined : tidyErrorLine(line);
}

const NEEDS_PASSWORD =
  /^\s*(?:sudo|doas|su|pkexec)(?:\[\d+\])?: (?:a terminal is required to read the password|a password is required|no tty present and no askpass program specified|\d+ incorrect password attempts?|Authentication failure|Sorry, try again)/i;

/**
 * A shell that could not read the command (`parse error near '('`, `syntax error near unexpected
 * token`, `unexpected EOF while looking for matching`, `bad substitution`): the command never ran;
 * it was written wrong, not refused by the work.
 */
export function isMalformedCommand(message: string): boolean {
  return /\b(?:parse error near|syntax error near unexpected token|syntax error: unexpected|unexpected EOF while looking for matching|bad substitution|unmatched ['"`]|unterminated quoted string)\b/i.test(message);
}

/** A stack trace (JavaScript frames or a Python traceback) anywhere in the output. */
export function hasStackTrace(text: string): boolean {
  // Cheap test first: most outputs have neither an indented "at " frame nor a traceback.
  if (!/\n[ \t]+at /.test(text) && !text.includes("Traceback (most recent call last):")) return false;
  const lines = head(text);
  for (let i = 0; i < lines.length; i++) {
    if (PY_TRACEBACK.test(lines[i]!)) return true;
    if (STACK_FRAME.test(lines[i]!) && i + 1 < lines.length && STACK_FRAME.test(lines[i + 1]!)) return true;
  }
  return false;
}

/**
 * The first line of the error in an output, as it reads there (whitespace collapsed, long
 * unbroken runs shortened, cut at ERROR_LINE_MAX): the message line above a JavaScript stack, the
 * exception line after a Python traceback, else the first line naming an error, else the first
 * line with text.
 */
export function errorLine(text: string): string {
  const lines = head(text);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (PY_TRACEBACK.test(line)) {
      const exception = lines.slice(i + 1).find((l) => PY_ERROR_LINE.test(l.trim()));
      if (exception) return tidyErrorLine(exception);
    }
    if (STACK_FRAME.test(line)) {
      for (let j = i - 1; j >= 0; j--) if (lines[j]!.trim().length > 0 && !STACK_FRAME.test(lines[j]!)) return tidyErrorLine(lines[j]!);
    }
  }
  const named =
    lines.find((l) => STRONG_ERROR.test(l) && !DETAIL_LINE.test(l)) ??
    lines.find((l) => DIAGNOSTIC.test(l)) ??
    lines.find((l) => WEAK_ERROR.test(l)) ??
    // A program's own message (`whoami: extra operand '/groups'`, `Get-Acl : The … command was found in …`).
    lines.find((l) => PROGRAM_MESSAGE.test(l) && !DETAIL_LINE.test(l)) ??
    // Nothing names an error: the output is ordinary (a listing); the exit status is what says it failed.
    lines.find((l) => EXIT_NOTE.test(l.trim())) ??
    lines.find(readsAsMessage) ??
    lines.find((l) => l.trim().length > 0) ??
    "";
  return tidyErrorLine(named);
}

/** The details a shell prints under an error's message (PowerShell's `+ CategoryInfo : …`, `At line:1 char:5`). */
const DETAIL_LINE = /^\s*\+\s|^\s*At line:\d+ char:\d+/;
/** A line a program writes about itself: its name, a colon, then words (GNU tools, PowerShell cmdlets). */
const PROGRAM_MESSAGE = /^\s*[\w.-]+ ?: +[A-Za-z'‘`"][^:]*\s\S/;
const EXIT_NOTE = /^(?:command )?(?:exit(?:ed)?(?: with)? (?:code|status)|exit code)[:\s]+-?\d+\.?$/i;

/**
 * A line a person reads as a message: words, not where the error was thrown (a stack frame, a
 * `path:line` location, a lone path), the source line quoted under it (a caret mark), or the
 * harness's exit-code note.
 */
function readsAsMessage(line: string): boolean {
  const t = line.trim();
  if (STACK_FRAME.test(line) || DETAIL_LINE.test(line) || EXIT_NOTE.test(t) || /^[\^~\s]+$/.test(t)) return false;
  if (/^[\w./\\@~[\]:()-]+$/.test(t)) return false;
  return /[A-Za-z]{2,}[\s,:]+[A-Za-z]{2,}/.test(t);
}

/**
 * The first line naming an error in the parts of an output marked as the command's error stream
 * (`[stderr]` … up to a `[stdout]` mark or the end of the block, as agents show a background
 * command's output): a failure the result reports even when nothing flags it.
 */
export function stderrErrorLine(output: string): string | undefined {
  if (!output.includes("[stderr]")) return undefined;
  let inStderr = false;
  for (const line of head(output)) {
    const marked = /\[(stderr|stdout)\]\s*(.*)$/.exec(line);
    if (marked) inStderr = marked[1] === "stderr";
    else if (/^\s*<\/?\w+>\s*$/.test(line)) inStderr = false;
    const text = marked ? marked[2]! : line;
    if (inStderr && (STRONG_ERROR.test(text) || WEAK_ERROR.test(text)) && readsAsMessage(text)) return tidyErrorLine(text);
  }
  return undefined;
}

/** Output that says nothing but its exit status: a check that answered no, not an error a person can read. */
export function saysOnlyExitStatus(output: string): boolean {
  return head(output).every((line) => EXIT_NOTE.test(line.trim()));
}

/** Collapses whitespace, shortens unbroken runs (minified code, base64) and cuts the line. */
export function tidyErrorLine(line: string): string {
  const words = line
    .replace(/`/g, "'")
    .split(/\s+/)
    .filter((w) => w.length > 0)
    .map((w) => (w.length > MAX_RUN ? `${w.slice(0, 40)}…` : w));
  return clip(words.join(" "), ERROR_LINE_MAX);
}

/** A terminal's colour and cursor codes: not text a person reads. */
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** The first 400 lines of the first 16 KB, without terminal codes, each cut to 500 characters (bounded regex work). */
function head(text: string): string[] {
  const start = (text.length > 16_000 ? text.slice(0, 16_000) : text).replace(ANSI, "");
  return start
    .split("\n", 400)
    .map((line) => (line.length > 500 ? line.slice(0, 500) : line))
    .filter((line) => line.trim().length > 0);
}
