/**
 * File tracking for what an agent does through a shell (any agent's shell tool: Codex's, Claude
 * Code's `Bash`, pi's `bash`) and Codex's patches: which files a command read and which a patch
 * or a command changed, moved or removed, where the call itself says so
 * (docs/design.md#file-tracking). A command is read as simple shell: `cat`, `nl`, `head`, `tail`,
 * `sed -n` name the files they read; `sed -i`, `>`, `>>`, `tee`, `touch`, `cp` and `install` the
 * files they write; `mv` and `git mv` move a file, `rm`, `git rm` and `unlink` remove one;
 * anything else (a script, a build) is not guessed at. Paths are kept as the call wrote them.
 */
import { classifyToolCall } from "./retention/tools.js";

export interface CallFileOps {
  read: string[];
  written: string[];
  edited: string[];
  /** Files moved or renamed (`mv a b`): `a` is gone, `b` holds it. */
  moved?: { from: string; to: string }[];
  /** Files removed. */
  removed?: string[];
}

/** Codex's tool names that run a command or apply a patch; other agents' shell tools are known by their shape. */
const SHELL_TOOLS = new Set(["exec_command", "shell", "shell_command", "local_shell", "container.exec"]);
const PATCH_TOOLS = new Set(["apply_patch"]);

/** Commands whose file arguments are files they read. */
const READERS = new Set(["cat", "nl", "head", "tail", "less", "more", "bat", "batcat", "sed", "wc"]);
/** Options of those commands that take a value (`head -n 20`): the value is not a file. */
const VALUE_OPTIONS = new Set(["-n", "-c", "-e", "-f", "--lines", "--bytes", "-s", "-v", "-w", "-b"]);

/** The file operations of one tool call, or undefined when the tool is not a shell or a patch. */
export function shellCallFileOps(name: string, args: Readonly<Record<string, unknown>>): CallFileOps | undefined {
  if (PATCH_TOOLS.has(name)) {
    const patch = typeof args.input === "string" ? args.input : typeof args.patch === "string" ? args.patch : "";
    return patchFileOps(patch);
  }
  if (!SHELL_TOOLS.has(name) && classifyToolCall(name, args).kind !== "run") return undefined;
  const script = commandScript(args);
  if (script.includes("*** Begin Patch")) return patchFileOps(script);
  return commandFileOps(script);
}

/** The command as shell text: `cmd` (exec_command), or `command` as a string or an argv (`bash -lc <script>`). */
function commandScript(args: Readonly<Record<string, unknown>>): string {
  if (typeof args.cmd === "string") return args.cmd;
  const command = args.command;
  if (typeof command === "string") return command;
  if (!Array.isArray(command) || !command.every((part) => typeof part === "string")) return "";
  const argv = command as string[];
  const shellAt = argv.findIndex((part) => part === "-lc" || part === "-c");
  if (shellAt >= 0 && argv[shellAt + 1] !== undefined) return argv[shellAt + 1]!;
  return argv.map((part) => (/^[\w./=:@%+-]+$/.test(part) ? part : `'${part.replace(/'/g, "'\\''")}'`)).join(" ");
}

/** Codex's patch format: `*** Add File:`, `*** Update File:`, `*** Delete File:`, `*** Move to:`. */
export function patchFileOps(patch: string): CallFileOps {
  const ops: CallFileOps = { read: [], written: [], edited: [] };
  for (const line of patch.split("\n")) {
    const match = /^\*\*\* (Add File|Update File|Delete File|Move to): (.+?)\s*$/.exec(line);
    if (!match) continue;
    const path = cleanPath(match[2]!);
    if (match[1] === "Add File" || match[1] === "Move to") ops.written.push(path);
    else ops.edited.push(path);
  }
  return ops;
}

/** The file operations of a shell command (a script of several commands). */
export function commandFileOps(script: string): CallFileOps {
  const ops: CallFileOps = { read: [], written: [], edited: [] };
  for (const segment of splitCommands(withoutHeredocBodies(script))) {
    const words = shellWords(segment.text);
    const args: string[] = [];
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!;
      const redirect = /^(\d?>>?)(.*)$/.exec(word);
      if (redirect) {
        const target = redirect[2] || words[++i];
        if (target !== undefined && !isDevice(target)) ops.written.push(cleanPath(target));
      } else if (word.startsWith("<")) {
        // An input redirection (or a heredoc) reads no named file we track.
        if (word === "<" || word === "<<" || word === "<<-") i++;
      } else {
        args.push(word);
      }
    }
    const [command, ...rest] = withoutPrefix(args);
    if (command === undefined) continue;
    if (placeFiles(command, rest, ops)) continue;
    if (!READERS.has(command) || segment.piped) continue;
    if (command === "sed") sedFiles(rest, ops);
    else ops.read.push(...fileArguments(rest));
  }
  return ops;
}

/** A redirection to another stream or a device (`2>&1`, `/dev/null`, Windows' `nul`), not to a file. */
function isDevice(target: string): boolean {
  return target.startsWith("&") || target.startsWith("/dev/") || /^(?:nul|con|\$null)$/i.test(target);
}

/** `sudo`, `env X=1`, `command`: words before the program that runs. */
function withoutPrefix(args: readonly string[]): string[] {
  let at = 0;
  while (at < args.length && (/^(?:sudo|env|command|nohup|time)$/.test(args[at]!) || /^\w+=/.test(args[at]!))) at++;
  // `git mv`, `git rm`: the subcommand is the program here.
  if (args[at] === "git" && (args[at + 1] === "mv" || args[at + 1] === "rm")) return [`git ${args[at + 1]}`, ...args.slice(at + 2)];
  return args.slice(at);
}

/** Commands that place, move or remove files (cp, install, mv, rm, tee, touch); false for any other. */
function placeFiles(command: string, rest: readonly string[], ops: CallFileOps): boolean {
  const { operands, target } = placeOperands(rest);
  switch (command) {
    case "mv":
    case "git mv":
    case "cp":
    case "install": {
      if (operands.length < (target === undefined ? 2 : 1)) return true;
      const sources = target === undefined ? operands.slice(0, -1) : operands;
      const destination = target ?? operands[operands.length - 1]!;
      for (const source of sources) {
        const inside = intoFolder(destination, sources, target !== undefined);
        const to = inside ? `${destination.replace(/\/+$/, "")}/${source.replace(/^.*\//, "")}` : destination;
        if (command === "cp" || command === "install") {
          ops.read.push(source);
          ops.written.push(to);
        } else (ops.moved ??= []).push({ from: source, to });
      }
      return true;
    }
    case "rm":
    case "git rm":
    case "unlink":
      if (operands.length > 0) (ops.removed ??= []).push(...operands);
      return true;
    case "tee":
    case "touch":
      ops.written.push(...operands);
      return true;
  }
  return false;
}

/** Options of cp, mv and install that take a value (`install -m 644`); `-t dir` names the folder the files go into. */
const PLACE_VALUE_OPTIONS = new Set(["-m", "-o", "-g", "-S", "--mode", "--owner", "--group", "--suffix"]);

function placeOperands(rest: readonly string[]): { operands: string[]; target?: string } {
  const operands: string[] = [];
  let target: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "-t" || arg === "--target-directory") target = rest[++i];
    else if (arg.startsWith("--target-directory=")) target = arg.slice("--target-directory=".length);
    else if (PLACE_VALUE_OPTIONS.has(arg)) i++;
    else if (!arg.startsWith("-")) operands.push(cleanPath(arg));
  }
  return { operands, ...(target !== undefined ? { target: cleanPath(target) } : {}) };
}

/** Whether the last operand of `mv`/`cp` is a folder the sources go into. */
function intoFolder(destination: string, sources: readonly string[], target = false): boolean {
  if (target || sources.length > 1 || /(?:^|\/)\.{0,2}\/?$/.test(destination) || destination.endsWith("/") || destination === "~") return true;
  const name = destination.replace(/^.*\//, "");
  // `mv notes.md docs`: a name without an extension while the file has one is a folder.
  return !name.includes(".") && sources.every((source) => /\.\w+$/.test(source.replace(/^.*\//, "")));
}

/** `sed -n '1,80p' f` reads f; `sed -i 's/a/b/' f` changes it. The first non-option word is the script. */
function sedFiles(args: readonly string[], ops: CallFileOps): void {
  const inPlace = args.some((arg) => arg === "-i" || arg.startsWith("-i") || arg === "--in-place");
  // With `-e script` the script is still the first word that is not an option.
  const files = args.filter((arg) => !arg.startsWith("-")).slice(1).map(cleanPath);
  (inPlace ? ops.edited : ops.read).push(...files);
}

function fileArguments(args: readonly string[]): string[] {
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (VALUE_OPTIONS.has(arg)) i++;
    else if (!arg.startsWith("-") && !/^[+-]?\d+$/.test(arg)) files.push(cleanPath(arg));
  }
  return files;
}

/** Commands of a script with whether each reads a pipe (`a | b`: b's file arguments are unusual). */
function splitCommands(script: string): { text: string; piped: boolean }[] {
  const segments: { text: string; piped: boolean }[] = [];
  let current = "";
  let quote: string | undefined;
  let piped = false;
  const flush = (nextPiped: boolean) => {
    if (current.trim().length > 0) segments.push({ text: current, piped });
    current = "";
    piped = nextPiped;
  };
  for (let i = 0; i < script.length; i++) {
    const char = script[i]!;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      current += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      current += char;
    } else if (char === "\n" || char === ";") {
      flush(false);
    } else if (char === "&" && script[i + 1] === "&") {
      flush(false);
      i++;
    } else if (char === "|") {
      const isOr = script[i + 1] === "|";
      flush(!isOr);
      if (isOr) i++;
    } else {
      current += char;
    }
  }
  flush(false);
  return segments;
}

/** A heredoc's lines are data, not commands: removed up to their terminator. */
function withoutHeredocBodies(script: string): string {
  const lines = script.split("\n");
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    kept.push(line);
    const heredoc = /<<-?\s*(['"]?)([\w-]+)\1/.exec(line);
    if (!heredoc) continue;
    const end = heredoc[2]!;
    while (i + 1 < lines.length && lines[i + 1]!.trim() !== end) i++;
    i++;
  }
  return kept.join("\n");
}

/** Splits a simple command into words, honouring quotes and backslashes. */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else if (char === "\\" && quote === '"' && i + 1 < text.length) word += text[++i];
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The path as the call names it: without a leading `./`, nor the parenthesis that closes a `$(cat x)` around it. */
function cleanPath(path: string): string {
  const bare = path.includes("(") ? path : path.replace(/\)+$/, "");
  return bare.startsWith("./") ? bare.slice(2) : bare;
}
