/**
 * What the `base-context` commands print, and how: results on stdout (text, or JSON with
 * `--json`), errors and progress on stderr. Colour only on a terminal and never with NO_COLOR
 * (no-color.org); progress only when stderr is a terminal, so logs and pipes stay clean.
 */
import { homedir } from "node:os";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join, relative, sep } from "node:path";
import { cutVisible } from "../tree/view/visible-text.js";

/** Where a command writes and what environment it sees; tests pass their own. */
export interface CliIo {
  stdout: Pick<NodeJS.WriteStream, "write"> & { isTTY?: boolean; columns?: number };
  stderr: Pick<NodeJS.WriteStream, "write"> & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Keys for interactive commands (the tree picker); absent in tests that do not type. */
  stdin?: NodeJS.ReadStream;
  /** How hints name this CLI (cliInvocation); "base-context" when absent. */
  cli?: string;
}

export function processIo(): CliIo {
  quietOnClosedPipe();
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, stdin: process.stdin, cli: cliInvocation(process.env) };
}

let pipeGuarded = false;
/** `base-context show … | head` closes the pipe early: stop quietly, as Unix tools do. */
function quietOnClosedPipe(): void {
  if (pipeGuarded) return;
  pipeGuarded = true;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}

export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
}

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;
const COLORS: Style = { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) };
const PLAIN: Style = { bold: (t) => t, dim: (t) => t, red: (t) => t, green: (t) => t, yellow: (t) => t, cyan: (t) => t };

export function styleFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Style {
  return colorEnabled(stream, env) ? COLORS : PLAIN;
}

export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The width a line may take: the terminal's, or unlimited when piped (scripts cut for themselves). */
export function lineWidth(io: CliIo): number {
  return io.stdout.isTTY === true && io.stdout.columns ? io.stdout.columns : Number.POSITIVE_INFINITY;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;
const visibleLength = (text: string) => text.replace(ANSI, "").length;

export type Align = "left" | "right";

/** Rows as aligned columns (two spaces apart); the last column is not padded. */
export function table(rows: readonly (readonly string[])[], align: readonly Align[] = []): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell))));
  return rows
    .map((row) =>
      row
        .map((cell, i) => {
          if (i === row.length - 1 && align[i] !== "right") return cell;
          const pad = " ".repeat(widths[i]! - visibleLength(cell));
          return align[i] === "right" ? pad + cell : cell + pad;
        })
        .join("  "),
    )
    .join("\n");
}

/** Whitespace collapsed to single spaces, cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max = Number.POSITIVE_INFINITY): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** A line cut to `width` visible characters (with an ellipsis); colour codes do not count and are closed. */
export function fitWidth(line: string, width: number): string {
  return cutVisible(line, width);
}

/** 12345 → "12,345" whatever the machine's locale, so output is the same everywhere. */
export function formatCount(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

/** A path under the home folder as `~/…`: shorter, and the same on every machine. */
export function displayPath(path: string, home: string = homedir()): string {
  if (home && (path === home || path.startsWith(home + sep))) return `~${path.slice(home.length)}`;
  return path;
}

/** "2026-12-02 14:03" in local time: dates people read, not ISO strings. */
export function displayTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

export interface Progress {
  update(message: string): void;
  done(): void;
}

const NO_PROGRESS: Progress = { update: () => undefined, done: () => undefined };

/** A one-line status on stderr for work that takes a while; nothing unless stderr is a terminal. */
export function startProgress(io: CliIo, message: string): Progress {
  if (io.stderr.isTTY !== true) return NO_PROGRESS;
  const style = styleFor(io.stderr, io.env);
  let shown = false;
  const show = (text: string) => {
    io.stderr.write(`\r\u001b[2K${style.dim(text)}`);
    shown = true;
  };
  show(`${message}…`);
  return {
    update: (text) => show(`${text}…`),
    done: () => {
      if (shown) io.stderr.write("\r\u001b[2K");
      shown = false;
    },
  };
}

/**
 * Commands that report problems themselves (settings, doctor) would otherwise show each one twice:
 * once in their report and once as the daemon parts' own warning log line on stderr.
 */
export function quietDaemonLogs(): void {
  process.env.BASE_CONTEXT_LOG ??= "error";
}

/**
 * How to run this CLI again from here, for the commands a hint prints: `base-context` when that
 * is on the PATH, else `node <path to the script that is running>` (in a clone, where nothing was
 * installed: `node packages/daemon/dist/cli/main.js`). When the command ran on another home or
 * database than the default (`BASE_CONTEXT_HOME`, `BASE_CONTEXT_DB` set, as `pnpm demo` does for
 * its commands), the hint sets them too: pasted into a shell that does not have them, it must not
 * look for the session in ~/.base-context (and make that folder).
 */
export function cliInvocation(env: NodeJS.ProcessEnv, script: string | undefined = process.argv[1], cwd: string = process.cwd()): string {
  const where = (["BASE_CONTEXT_HOME", "BASE_CONTEXT_DB"] as const)
    .filter((name) => (env[name] ?? "").length > 0)
    .map((name) => `${name}=${shellWord(env[name]!)} `)
    .join("");
  return `${where}${command(env, script, cwd)}`;
}

function command(env: NodeJS.ProcessEnv, script: string | undefined, cwd: string): string {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir.length === 0) continue;
    try {
      accessSync(join(dir, "base-context"), constants.X_OK);
      return "base-context";
    } catch {
      // not in this folder
    }
  }
  if (script === undefined) return "base-context";
  const fromHere = relative(cwd, script);
  const path = fromHere.length > 0 && !fromHere.startsWith("..") && !isAbsolute(fromHere) ? fromHere : script;
  return `node ${shellWord(path)}`;
}

/** A word the shell reads as it is: quoted when it holds anything but plain path characters. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./~-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Commands in a hint (`base-context show …`) as they run here (cliInvocation). */
export function runnableHint(hint: string, cli: string): string {
  return cli === "base-context" ? hint : hint.replace(/\bbase-context (?=[a-z])/g, `${cli} `);
}
