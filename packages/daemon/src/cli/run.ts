/**
 * Running one command: `--help`, argument errors (exit 2), failures (exit 1) with a message
 * that says what to do next, all in one place so every command behaves the same.
 */
import { AppError, CancelledError, RequestFailedError } from "../errors.js";
import { commandHelp, parseCommandArgs, UsageError, type CommandSpec, type ParsedArgs } from "./args.js";
import { styleFor, type CliIo } from "./output.js";
import { startSpinner, type Spinner } from "./spinner.js";

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A failure the user can act on: the message, then hints (commands to run, files to look at). */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly hints: readonly string[] = [],
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
  }
}

export type CommandBody = (args: ParsedArgs, io: CliIo) => Promise<number | void>;

export async function runCommand(spec: CommandSpec, argv: readonly string[], io: CliIo, body: CommandBody): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseCommandArgs(spec, argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return usageFailure(spec, io, error.message);
  }
  if (args.help) {
    io.stdout.write(commandHelp(spec));
    return EXIT.ok;
  }
  try {
    return (await body(args, io)) ?? EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(spec, io, error.message);
    const failure = toCliError(error);
    const style = styleFor(io.stderr, io.env);
    const hints = failure.hints.map((hint) => `  ${hint}\n`).join("");
    io.stderr.write(`${style.red(`base-context ${spec.name}:`)} ${failure.message}\n${hints}`);
    if (!(error instanceof CliError || error instanceof AppError) && io.env.BASE_CONTEXT_LOG === "debug" && error instanceof Error) {
      io.stderr.write(`${error.stack ?? ""}\n`);
    }
    return failure.exitCode;
  }
}

/**
 * Work that Ctrl-C may cancel (a model call), shown with a spinner: the first SIGINT aborts
 * `signal` with a CancelledError (nothing is written), a second one ends the process as usual.
 */
export async function interruptible<T>(io: CliIo, message: string, work: (signal: AbortSignal, spinner: Spinner) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  const onInterrupt = () => interrupt.abort(new CancelledError("interrupted; nothing was written"));
  process.once("SIGINT", onInterrupt);
  const spinner = startSpinner(io, message);
  try {
    return await work(interrupt.signal, spinner);
  } finally {
    spinner.stop();
    process.off("SIGINT", onInterrupt);
  }
}

function usageFailure(spec: CommandSpec, io: CliIo, message: string): number {
  io.stderr.write(`base-context ${spec.name}: ${message}\nRun "base-context ${spec.name} --help" for usage.\n`);
  return EXIT.usage;
}

/** Errors of the daemon's parts, worded for the command line. */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof AppError) {
    if (error.code === "session_not_found") {
      return new CliError(error.message, ["List the sessions with: base-context sessions"]);
    }
    if (error.code === "session_exists" && typeof error.data.sessionId === "string") {
      return new CliError(error.message, [`It is already here: base-context show ${error.data.sessionId}`]);
    }
    if (error.code === "entry_not_found" && typeof error.data.sessionId === "string") {
      return new CliError(error.message, [`See the session's entries with: base-context tree ${error.data.sessionId}`]);
    }
    return new CliError(error.message);
  }
  if (error instanceof RequestFailedError) return new CliError(error.message);
  if (error instanceof CancelledError) return new CliError("cancelled; nothing was written");
  return new CliError(error instanceof Error ? error.message : String(error));
}
