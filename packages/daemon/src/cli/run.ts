/**
 * Running one command: `--help`, argument errors (exit 2), failures (exit 1) with a message
 * that says what to do next, all in one place so every command behaves the same.
 */
import { AppError, CancelledError } from "../errors.js";
import { commandHelp, parseCommandArgs, UsageError, type CommandSpec, type ParsedArgs } from "./args.js";
import { CliError, EXIT } from "./cli-error.js";
import { toCliError } from "./messages.js";
import { runnableHint, styleFor, type CliIo } from "./output.js";
import { startSpinner, type Spinner } from "./spinner.js";

export { CliError, EXIT } from "./cli-error.js";
export { toCliError } from "./messages.js";

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
    const cli = io.cli ?? "base-context";
    const hints = failure.hints.map((hint) => `  ${runnableHint(hint, cli)}\n`).join("");
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
export async function interruptible<T>(
  io: CliIo,
  message: string,
  work: (signal: AbortSignal, spinner: Spinner) => Promise<T>,
): Promise<T> {
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
