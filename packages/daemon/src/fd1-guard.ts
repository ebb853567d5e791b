/**
 * Whether bytes written to file descriptor 1 can still reach a stdio daemon's client. A stdio
 * daemon moves its protocol off fd 1 while it serves (server/protocol-output.ts registers how);
 * code the daemon did not write, which may write to fd 1 (plugins), waits for that here. Where
 * nothing was registered (the CLI's commands, `serve --socket`), fd 1 is no protocol: no wait.
 *
 * When the move failed (no /proc, the helper process failed or did not answer in time), fd 1 is
 * still the protocol stream: plugins must then not run in the daemon's process at all
 * (daemon-plugins.ts runs them in child processes instead, and says so).
 */
export interface Fd1State {
  /** True when bytes written to fd 1 would reach the client as protocol bytes. */
  reachesClient: boolean;
  /** Why the protocol could not be moved off fd 1 (with reachesClient). */
  why?: string;
}

let guard: () => Promise<Fd1State> = () => Promise.resolve({ reachesClient: false });

export function registerFd1Guard(start: () => Promise<Fd1State>): void {
  guard = start;
}

/** Starts moving the protocol off fd 1 if that has not started; resolves once it is done, or has failed and says why. */
export function whenFd1Guarded(): Promise<Fd1State> {
  return guard();
}
