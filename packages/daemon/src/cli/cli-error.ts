/** The exit statuses of every command, and the error a command throws to stop with a message. */
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
