/**
 * Whether bytes written to file descriptor 1 can still reach a stdio daemon's client. A stdio
 * daemon moves its protocol off fd 1 while it serves (server/protocol-output.ts registers how);
 * code the daemon did not write, which may write to fd 1 (plugins), waits for that here. Where
 * nothing was registered (the CLI's commands, `serve --socket`), fd 1 is no protocol: no wait.
 */
let guard: () => Promise<unknown> = () => Promise.resolve();

export function registerFd1Guard(start: () => Promise<unknown>): void {
  guard = start;
}

/** Starts moving the protocol off fd 1 if that has not started; resolves once it is done (or failed, and said so). */
export async function whenFd1Guarded(): Promise<void> {
  await guard();
}
