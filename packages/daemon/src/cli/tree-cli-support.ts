/**
 * What `base-context tree` and `base-context navigate` share: they run in-process on the same
 * database a `serve` daemon uses (SQLite allows several processes), report errors in one shape
 * and use the same exit codes.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { Daemon } from "../daemon.js";
import { AppError, CancelledError, RequestFailedError } from "../errors.js";

export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

export interface CliIo {
  stdout: Pick<NodeJS.WriteStream, "write"> & { isTTY?: boolean; columns?: number };
  stderr: Pick<NodeJS.WriteStream, "write"> & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export const processIo = (): CliIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** Colour only on a terminal, and never when NO_COLOR is set to anything but "" (no-color.org). */
export function wantsColor(io: CliIo): boolean {
  return io.stdout.isTTY === true && !io.env.NO_COLOR;
}

export type ParsedArgs<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** Parsed arguments, or the exit code after printing what was wrong and the command's usage. */
export function parseCommandArgs<T extends ParseArgsConfig>(command: string, usage: string, config: T, io: CliIo): ParsedArgs<T> | number {
  try {
    return parseArgs(config);
  } catch (error) {
    io.stderr.write(`base-context ${command}: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return EXIT.usage;
  }
}

/** Runs `work` with a daemon on the user's database and releases it whatever happens. */
export async function withDaemon(command: string, io: CliIo, work: (daemon: Daemon) => Promise<number>): Promise<number> {
  let daemon: Daemon | undefined;
  try {
    daemon = new Daemon({ env: io.env });
    return await work(daemon);
  } catch (error) {
    io.stderr.write(`base-context ${command}: ${describeError(error)}\n`);
    return error instanceof CancelledError ? EXIT.interrupted : EXIT.failed;
  } finally {
    await daemon?.dispose();
  }
}

function describeError(error: unknown): string {
  if (error instanceof AppError || error instanceof RequestFailedError) return error.message;
  if (error instanceof CancelledError) return "cancelled; nothing was written";
  return error instanceof Error ? error.message : String(error);
}
