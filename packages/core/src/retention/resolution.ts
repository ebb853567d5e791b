/**
 * When an error is fixed (docs/retention.md "Errors"): a later success of the same action — the
 * same command however it was wrapped (`cd x && npm run check 2>&1 | tail` is `npm run check`),
 * the same file written again, a copy to the same destination — or the assistant's own text
 * saying it was fixed (naming the error's file, code or name, or saying the build or the tests
 * pass now, for the failures of commands). A fixed error is not blocked, and repair never adds it.
 */

import { commandFileOps } from "../shell-file-ops.js";
import { extractPaths } from "./text.js";

const PREFIX_SEGMENT = /^(?:cd|pushd|popd|export|source|\.|set|unset|nvm use|ulimit)\b/;
const FILTER = /^(?:head|tail|grep|egrep|rg|less|more|cat|wc|sort|uniq|tee|cut|awk|sed|tr|column|jq)\b/;
/** Programs whose action is known by their last argument: two copies to one place are one action. */
const DESTINATION_PROGRAMS = new Set(["cp", "mv", "ln", "touch", "mkdir", "rm", "chmod", "install"]);

/** Splits a shell command at `&&`, `||`, `;`, `|` and line breaks outside quotes (`grep "a\|b"` stays whole). */
export function shellSegments(command: string): { text: string; joiner: string }[] {
  const out: { text: string; joiner: string }[] = [];
  let quote: string | undefined;
  let current = "";
  let joiner = "";
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (quote) {
      if (ch === "\\" && quote === '"' && i + 1 < command.length) {
        current += ch + command[++i]!;
        continue;
      }
      if (ch === quote) quote = undefined;
      current += ch;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === "`") {
      quote = ch;
      current += ch;
      continue;
    }
    if (ch === "\\" && i + 1 < command.length) {
      current += ch + command[++i]!;
      continue;
    }
    const two = command.slice(i, i + 2);
    let sep = "";
    if (two === "&&" || two === "||") sep = two;
    else if (ch === ";" || ch === "\n") sep = ";";
    else if (ch === "|") sep = "|";
    if (sep) {
      out.push({ text: current.trim(), joiner });
      joiner = sep;
      current = "";
      i += sep.length === 2 ? 1 : 0;
      continue;
    }
    current += ch;
  }
  out.push({ text: current.trim(), joiner });
  return out.filter((s) => s.text.length > 0);
}

/**
 * The key two runs of one command share: directory changes, redirections and output filters
 * (`| tail -20`) left out. `cd packages/a && npm run check 2>&1 | tail -20` → `npm run check`.
 */
export function commandKey(command: string): string {
  const kept: string[] = [];
  for (const { text, joiner } of shellSegments(command)) {
    if (joiner === "|" && FILTER.test(text)) continue;
    // `a && echo "✓ valid"`: the echo reports on `a`, it is not part of the action.
    if (joiner !== "" && joiner !== "|" && /^(?:echo|printf|true)\b/.test(text)) continue;
    if (PREFIX_SEGMENT.test(text)) continue;
    const bare = text
      .replace(/\s*\d?>>?\s*(?:&\d|\/dev\/null|\S+)/g, "")
      .replace(/\s+/g, " ")
      .trim();
    if (bare.length > 0) kept.push(programRun(bare));
  }
  return kept.length > 0 ? kept.join(" && ") : command.trim();
}

/**
 * A command as the program it runs: without what only wraps the run (`sudo -E`, `env X=1`,
 * `timeout 5`, `nice -n 10`, `time`, `nohup`, assignments before it) and with the program by its
 * name, not its path (`/usr/bin/tool` and `./target/debug/tool` are `tool`). `sudo tool x` is
 * `tool x` run again with more rights: the same action.
 */
export function programRun(segment: string): string {
  const words = segment.split(" ");
  let at = 0;
  for (;;) {
    const word = words[at];
    if (word === undefined) break;
    if (word === "sudo" || word === "doas") {
      at++;
      while (words[at]?.startsWith("-")) at += /^-[ugCDhprtU]$/.test(words[at]!) ? 2 : 1;
    } else if (word === "env") {
      at++;
      while (words[at]?.startsWith("-")) at++;
    } else if (word === "timeout") {
      at++;
      while (words[at]?.startsWith("-")) at++;
      if (/^\d+(?:\.\d+)?[smhd]?$/.test(words[at] ?? "")) at++;
    } else if (word === "nice") {
      at += words[at + 1] === "-n" ? 3 : /^-\d+$/.test(words[at + 1] ?? "") ? 2 : 1;
    } else if (word === "time" || word === "nohup") at++;
    else if (/^["']?[A-Za-z_]\w*=/.test(word) && at + 1 < words.length) at = afterAssignment(words, at);
    else break;
  }
  const rest = words.slice(at);
  if (rest.length === 0) return segment;
  // The program by its name: a path to it runs the same program.
  if (/[\\/]/.test(rest[0]!) && !/[\\/]$/.test(rest[0]!)) rest[0] = rest[0]!.replace(/^.*[\\/]/, "");
  return rest.join(" ");
}

/** The word after an assignment (`X=1`, `"PATH=a b:$PATH"` however many words its quotes hold); none after a command substitution. */
function afterAssignment(words: readonly string[], at: number): number {
  const first = words[at]!;
  // `X=$(cat a b)`: the command it runs is the value, not a program after it.
  const value = first.slice(first.indexOf("=") + 1);
  if (/^["']?(?:\$\(|`)/.test(value) && !/[)`]["']?$/.test(value)) return words.length;
  // `"X=a b"` or `X="a b"`: the quote opens the word or its value.
  const quote = /^["']/.exec(first)?.[0] ?? /^[^=]*=(["'])/.exec(first)?.[1];
  const opened = quote === undefined ? -1 : first.indexOf(quote);
  if (quote === undefined || first.indexOf(quote, opened + 1) > opened) return at + 1;
  let end = at + 1;
  while (end < words.length && !words[end]!.includes(quote)) end++;
  return end + 1;
}

/**
 * The keys an action is known by: its command key, its verb (below), and for copies and moves
 * their destination. A success of `a && b` is a success of `a` and of `b` too: their keys count
 * for it.
 */
export function commandKeys(command: string): string[] {
  const key = commandKey(command);
  const keys = [`run:${key}`];
  const parts = shellSegments(key);
  if (parts.length > 1 && parts.every((p) => p.joiner !== "|" && p.joiner !== "||")) {
    for (const part of parts) keys.push(`run:${part.text}`, ...verbKeys(part.text));
  }
  const last = shellSegments(key).pop()?.text ?? "";
  keys.push(...verbKeys(last));
  const words = last.split(/\s+/);
  const program = words[0]?.replace(/^.*\//, "") ?? "";
  if (DESTINATION_PROGRAMS.has(program) && words.length >= 2) keys.push(`dest:${program}:${words[words.length - 1]}`);
  return [...new Set(keys)];
}

/** Programs whose first argument is a file, a host or a script, not a subcommand: they have no verb. */
const NO_VERB = new Set(
  "cat ls rm cp mv cd mkdir rmdir touch chmod chown ln echo printf head tail less more grep egrep fgrep rg find wc sort diff file stat open code vim vi nano python python3 node deno ruby perl php bash sh zsh fish powershell powershell.exe pwsh cmd cmd.exe curl wget ssh scp rsync tar zip unzip sleep test which type kill pkill".split(
    " ",
  ),
);
/** Subcommands that take a subcommand of their own (`npm run build`, `gh pr create`, `docker compose up`). */
const TWO_LEVEL = /^(?:run|exec|compose|x)$/;
const SUBCOMMAND = /^[a-z][a-z0-9-]*(?::[a-z0-9-]+)*$/;

/**
 * `verb:git push` for `git push --set-upstream origin main`: the program and its subcommand.
 * A later success of the same verb is another approach to the same goal, and fixes the failure.
 * Commands whose first argument is not a subcommand (`python a.py`, `cat x`) have none.
 */
function verbKeys(segment: string): string[] {
  const verb = verbOf(segment);
  return verb ? [`verb:${verb.verb}`] : [];
}

/** A segment's program and subcommand (`git push`, `npm run build`), and the words after them. */
function verbOf(segment: string): { verb: string; rest: string[] } | undefined {
  const words = segment.split(/\s+/).filter((w) => w.length > 0 && !/^\w+=/.test(w));
  while (words.length > 0 && /^(?:env|sudo|time|nice|timeout|exec|npx|bunx)$/.test(words[0]!)) {
    words.shift();
    if (words.length > 0 && /^\d+[smh]?$/.test(words[0]!)) words.shift();
  }
  const program = (words[0] ?? "").replace(/^.*\//, "");
  if (program.length === 0 || NO_VERB.has(program) || !SUBCOMMAND.test(words[1] ?? "")) return undefined;
  const second = TWO_LEVEL.test(words[1]!) || program === "gh" ? words[2] : undefined;
  const two = second !== undefined && SUBCOMMAND.test(second);
  return { verb: two ? `${program} ${words[1]} ${second}` : `${program} ${words[1]}`, rest: words.slice(two ? 3 : 2) };
}

/**
 * What a command's `verb` acts on: its arguments after the program and subcommand that are
 * neither options nor an option's value (`npm test -- auth` → `auth`, `git push -u origin x` → `x`).
 */
function verbTargets(key: string, verb: string): string[] {
  const targets: string[] = [];
  for (const { text } of shellSegments(key.replace(/^run:/, ""))) {
    const found = verbOf(text);
    if (found?.verb !== verb) continue;
    let options = true;
    for (let i = 0; i < found.rest.length; i++) {
      const word = found.rest[i]!;
      if (options && word === "--") options = false;
      else if (options && word.startsWith("-")) {
        if (!word.includes("=")) i++;
      } else targets.push(word);
    }
  }
  return targets;
}

/**
 * What a command's run of `verbKey` (`verb:npm test`) acts on, as one key: its targets sorted, or
 * "" when it names none. A later failure of the same program and subcommand is the same work
 * failing again when it acts on what the earlier one did, or the earlier named nothing to act on
 * (`git push`, then `git push -u origin x`); test runs of other targets (`npm test -- a`, then
 * `npm test -- b`) are other work, and each failure stands on its own.
 */
export function verbWorkKey(actionKey: string, verbKey: string): string {
  return [...new Set(verbTargets(actionKey, verbKey.slice("verb:".length)))].sort().join("\u0001");
}

const FIXED =
  /\b(?:fixed|fixes|resolved|solved|now (?:passes|pass|compiles|works|builds|succeeds|runs)|(?:passes|works|compiles|builds|succeeds) now|compiles (?:cleanly|without errors)|without (?:any )?errors|no (?:more )?(?:type |compile |build )?errors|build (?:succeeds|succeeded|passes|is green)|all (?:\d+ )?tests (?:pass|passed)|tests (?:now )?pass)\b/i;
const BUILD_OR_TESTS = /\b(?:build|builds|compile|compiles|typecheck|type check|tests?|check|lint|tsc|errors)\b/i;
const NEGATED = /\b(?:not|n't|still|yet|fails?|failing)\b/i;

/** Names in an error line a fix statement may mention: file names, error codes, quoted names. */
function errorTokens(errorLine: string): string[] {
  const tokens = new Set<string>();
  for (const m of errorLine.matchAll(/[\w.-]+\.[a-z]{1,5}\b/gi)) if (/[a-z]/i.test(m[0]) && m[0].length >= 5) tokens.add(m[0].replace(/^.*\//, ""));
  for (const m of errorLine.matchAll(/\b(?:TS\d{3,5}|E\d{3,5}|[A-Z]{2,}\d{2,5})\b/g)) tokens.add(m[0]);
  for (const m of errorLine.matchAll(/['"`]([A-Za-z_$][\w$.]{3,})['"`]/g)) tokens.add(m[1]!);
  return [...tokens];
}

/**
 * Whether an assistant sentence says this error was fixed: a fix word and a name from the error
 * line, or — for a command's failure — a fix word about the build or the tests. A sentence that
 * says something still fails resolves nothing.
 */
export function saysFixed(
  sentence: string,
  error: { readonly message: string; readonly fromCommand: boolean; readonly what?: string },
): boolean {
  if (!maySayFixed(sentence)) return false;
  const lower = sentence.toLowerCase();
  if (errorTokens(error.message).some((token) => lower.includes(token.toLowerCase()))) return true;
  // "The build passes now" is about building and testing: not about a `sudo setcap` that failed.
  return error.fromCommand && BUILD_OR_TESTS.test(sentence) && (error.what === undefined || BUILDS_OR_TESTS.test(error.what));
}

/** A command that builds, checks or tests (what "the build passes now" can be about). */
const BUILDS_OR_TESTS =
  /\b(?:build|test|tests|check|lint|typecheck|tsc|compile|make|cmake|ninja|pytest|jest|vitest|mocha|ava|tap|rspec|phpunit|cargo|clippy|gradle|gradlew|mvn|ctest|go vet|mypy|pyright|eslint|biome|ruff|flake8|dotnet|swift|xcodebuild|bazel|buck)\b/i;

/** Whether `sentence` says something was fixed at all (what `saysFixed` asks first, whatever the error). */
export function maySayFixed(sentence: string): boolean {
  return FIXED.test(sentence) && (!NEGATED.test(sentence) || /\bwithout (?:any )?errors\b|\bno (?:more )?\w* ?errors\b/i.test(sentence));
}

/**
 * A result that only says the call was cancelled or refused by the user ("Command aborted", "The
 * user doesn't want to proceed with this tool use"): no failure to fix.
 */
export function wasCancelled(output: string): boolean {
  const text = output.trim();
  if (/^\[?request interrupted by user/i.test(text)) return true;
  const lines = text.split("\n");
  return /^(?:command )?(?:aborted|cancelled|canceled|interrupted)\.?$/i.test(lines[lines.length - 1]!.trim());
}

/**
 * The key every later success counts for: a failed read (a file that was not there) is a fact
 * the agent learned, not a failure that stands once the work goes on.
 */
export const ANY_LATER_SUCCESS = "any-later-success";

/**
 * The key a finished answer of the model counts for: the agent moved on. A failed read (a file it
 * did not find) stops standing there too; a failed command does not (the answer may only report it).
 */
export const MOVED_ON = "moved-on";

/**
 * The keys a failure of a command is known by: the whole command (not each part: `a && b` may
 * have failed in `a`, and `a` working later says nothing of `b`), the verb of its last part, its
 * last part working on its own later (what the command was for, reached), and a copy's destination.
 */
export function commandFailureKeys(command: string): string[] {
  const parts = shellSegments(commandKey(command));
  const last = parts[parts.length - 1]?.text ?? "";
  const verb = new Set(verbKeys(last));
  const keys = commandKeys(command).filter((key, i) => i === 0 || key.startsWith("dest:") || verb.has(key));
  // `source env && rustc --version && cargo --version`: a later `cargo --version` that works reached what it was for.
  if (parts.length > 1 && parts[parts.length - 1]!.joiner !== "|") keys.push(`run:${last}`);
  return [...new Set(keys)];
}

/**
 * `content:<fingerprint>` of what a call writes (a Write tool's `content`): the same content written
 * elsewhere is the change done another way (a plan refused in one folder, written to another).
 * Short contents (an empty file, a one-liner) say too little to be known again.
 */
export function contentKey(args: Readonly<Record<string, unknown>>): string | undefined {
  const content = typeof args.content === "string" ? args.content : undefined;
  if (content === undefined) return undefined;
  const text = content.replace(/\s+/g, " ").trim();
  if (text.length < 80) return undefined;
  // FNV-1a over the text: a short, stable name for it.
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return `${CONTENT}${text.length}:${hash.toString(16)}`;
}

const CONTENT = "content:";

/** A key `contentKey` made: a success of it wrote that content (maybe elsewhere). */
export function isContentKey(key: string): boolean {
  return key.startsWith(CONTENT);
}

/**
 * The keys of a tool call's action: a command's (above); for a file, the first is the one its
 * failure is known by: a failed change is fixed by a later change of the file, a failed read by
 * any later read or change of a file of that name (the agent found the file it meant), or by any
 * later success (the work went on). A success counts for every key.
 */
export function actionKeys(kind: string, target: string, toolName?: string): string[] {
  // A command that worked reached the files it names (a failed read of one stops standing) and
  // wrote the files it writes (a failed change of one is done another way).
  if (kind === "run") return [...commandKeys(target), ...pathLookupKeys(target), ...writtenKeys(target)];
  const name = `lookup:${target.replace(/^.*[\\/]/, "")}`;
  if (kind === "read") return [name, ANY_LATER_SUCCESS, MOVED_ON];
  if (kind === "modify") return [`file:${target}`, name, wroteKey(target)];
  // A tool we know nothing about (waiting on a background task, a web fetch): the same tool working later.
  if (kind === "other" && toolName !== undefined) return [`${kind}:${target}`, `tool:${toolName}`];
  return [`${kind}:${target}`];
}

/** `lookup:<name>` for each file a command names: what a read of that file is known by. */
export function pathLookupKeys(command: string): string[] {
  return [...new Set(extractPaths(command).map((path) => `lookup:${path.replace(/^.*[\\/]/, "")}`))];
}

/**
 * `wrote:<folder>/<name>`: a file written, known by its last two path parts, so a change made
 * another way (a shell's heredoc to `$HOME/…/scripts/a.py` after an edit of `C:/…/scripts/a.py`
 * failed) is the same file written.
 */
function wroteKey(path: string): string {
  return `wrote:${path.replace(/\\/g, "/").split("/").filter((part) => part.length > 0).slice(-2).join("/")}`;
}

function writtenKeys(command: string): string[] {
  const ops = commandFileOps(command);
  return [...ops.written, ...ops.edited, ...(ops.moved ?? []).map((move) => move.to)].map(wroteKey);
}

/** The keys a failure of a tool call's action is known by: a failed change is fixed by the file written again, however. */
export function actionFailureKeys(kind: string, target: string, toolName?: string): string[] {
  if (kind === "run") return commandFailureKeys(target);
  const keys = actionKeys(kind, target, toolName);
  if (kind === "modify") return [keys[0]!, wroteKey(target)];
  return kind === "read" || kind === "other" ? keys : keys.slice(0, 1);
}

/**
 * The command a failure belongs to when its message names another one (`Command failed: git rev-parse
 * --show-toplevel`): the harness around the action failed, not the action, and that failure
 * stands until the named command works, however many actions it breaks.
 */
export function failedCommandNamed(message: string, ownCommand: string | undefined): string | undefined {
  const named = /^Command failed: (.+)$/.exec(message.trim())?.[1]?.trim();
  if (named === undefined || named.length === 0) return undefined;
  return ownCommand !== undefined && commandKey(named) === commandKey(ownCommand) ? undefined : named;
}
