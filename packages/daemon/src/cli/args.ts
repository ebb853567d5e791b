/**
 * Command-line arguments for the `base-context` commands: each command declares its arguments
 * and options once (CommandSpec), and both the parser and its `--help` text come from that
 * declaration, so the help can never describe options the parser does not know.
 */
import { parseArgs } from "node:util";

export interface OptionSpec {
  /** Long name, without the dashes. */
  readonly name: string;
  readonly short?: string;
  /** Placeholder for the option's value (`dir`, `n`); an option without one is a flag. */
  readonly value?: string;
  readonly description: string;
}

export interface ArgumentSpec {
  readonly name: string;
  readonly description: string;
  readonly optional?: boolean;
}

export interface CommandSpec {
  readonly name: string;
  /** One line, shown in `base-context --help`. */
  readonly summary: string;
  /** Paragraphs shown under the usage line. */
  readonly description?: string;
  readonly arguments?: readonly ArgumentSpec[];
  readonly options?: readonly OptionSpec[];
  readonly examples?: readonly string[];
  /** What the exit status means when it says more than "0 ok, 1 failure, 2 usage error". */
  readonly exitStatus?: string;
}

export interface ParsedArgs {
  /** Positional arguments, in order. */
  readonly arguments: readonly string[];
  readonly options: Readonly<Record<string, string | boolean | undefined>>;
  /** `--help` / `-h` was given: print the help, do nothing else. */
  readonly help: boolean;
}

/** The arguments do not fit the command: exit status 2, with the message and a pointer to --help. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export const JSON_OPTION: OptionSpec = { name: "json", description: "print JSON (for scripts) instead of text" };
const HELP_OPTION: OptionSpec = { name: "help", short: "h", description: "show this help" };

export function parseCommandArgs(spec: CommandSpec, argv: readonly string[]): ParsedArgs {
  const beforeDoubleDash = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  // --help wins over everything else, even over options the command does not know.
  if (beforeDoubleDash.includes("--help") || beforeDoubleDash.includes("-h")) return { arguments: [], options: {}, help: true };

  const config: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const option of spec.options ?? []) {
    config[option.name] = { type: option.value !== undefined ? "string" : "boolean", ...(option.short ? { short: option.short } : {}) };
  }
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options: config, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(describeParseError(error));
  }

  const declared = spec.arguments ?? [];
  const required = declared.filter((argument) => !argument.optional);
  if (parsed.positionals.length < required.length) {
    throw new UsageError(`missing <${required[parsed.positionals.length]!.name}>`);
  }
  if (parsed.positionals.length > declared.length) {
    throw new UsageError(`unexpected argument "${parsed.positionals[declared.length]}"`);
  }
  const options: Record<string, string | boolean | undefined> = {};
  for (const [name, value] of Object.entries(parsed.values)) options[name] = Array.isArray(value) ? value[value.length - 1] : value;
  return { arguments: parsed.positionals, options, help: false };
}

export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.options[name];
  return typeof value === "string" ? value : undefined;
}

export function flag(args: ParsedArgs, name: string): boolean {
  return args.options[name] === true;
}

export function integerOption(args: ParsedArgs, name: string, range: { min: number; max: number }): number | undefined {
  const text = stringOption(args, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw new UsageError(`--${name} takes a whole number from ${range.min} to ${range.max}, not "${text}"`);
  }
  return value;
}

export function choiceOption<T extends string>(args: ParsedArgs, name: string, choices: readonly T[]): T | undefined {
  const text = stringOption(args, name);
  if (text === undefined) return undefined;
  if (!(choices as readonly string[]).includes(text)) {
    throw new UsageError(`--${name} must be one of ${choices.join(", ")}, not "${text}"`);
  }
  return text as T;
}

export function commandHelp(spec: CommandSpec): string {
  const synopsis = (spec.arguments ?? []).map((argument) => (argument.optional ? `[${argument.name}]` : `<${argument.name}>`));
  const lines = [`Usage: base-context ${[spec.name, ...synopsis, "[options]"].join(" ")}`, "", spec.summary];
  if (spec.description) lines.push("", spec.description);
  if (spec.arguments && spec.arguments.length > 0) {
    lines.push("", "Arguments:", ...columns(spec.arguments.map((argument) => [argument.name, argument.description])));
  }
  const options = [...(spec.options ?? []), HELP_OPTION].map((option) => [optionLabel(option), option.description] as const);
  lines.push("", "Options:", ...columns(options));
  if (spec.examples && spec.examples.length > 0) lines.push("", "Examples:", ...spec.examples.map((example) => `  ${example}`));
  lines.push("", spec.exitStatus ?? "Exit status: 0 ok, 1 failure, 2 usage error.");
  return `${lines.join("\n")}\n`;
}

function optionLabel(option: OptionSpec): string {
  const long = `--${option.name}${option.value !== undefined ? ` <${option.value}>` : ""}`;
  return option.short ? `-${option.short}, ${long}` : `    ${long}`;
}

function columns(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

/** node:util's messages, shortened to what a person needs. */
function describeParseError(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const text = message ?? String(error);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const match = /'([^']+)'/.exec(text);
    return `unknown option ${match?.[1] ?? text}`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const match = /'(-[^' ]+)/.exec(text);
    if (match && /argument missing/.test(text)) return `${match[1]} needs a value`;
    if (match && /does not take an argument/.test(text)) return `${match[1]} does not take a value`;
  }
  return text;
}
