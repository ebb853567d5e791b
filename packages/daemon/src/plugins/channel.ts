/**
 * Where one plugin version runs, as the host sees it: a worker thread of the daemon (the default)
 * or a child process (`plugins.isolation: "process"`). Either way the host and the plugin's
 * bootstrap exchange JSON strings (wire.ts); the plugin's stdout and stderr come out as streams.
 */
import type { Readable } from "node:stream";

export interface ChannelExit {
  /** "oom": the plugin ran out of the memory it is allowed (heap limit, or address space). */
  cause: "oom" | "crash";
  message: string;
}

export interface PluginChannel {
  readonly stdout: Readable;
  readonly stderr: Readable;
  post(message: string): void;
  /** Messages from the plugin's side, not yet parsed (a plugin may post anything on a worker's port). */
  onMessage(listener: (raw: unknown) => void): void;
  /** A message longer than the channel accepts was refused unread; `start` is its first characters. */
  onOversize?(listener: (start: string) => void): void;
  /** Once, whatever ended it (terminate included). */
  onExit(listener: (exit: ChannelExit) => void): void;
  /**
   * Ends it; true once it has ended. False when it was still running `stopTimeoutMs` after it was
   * asked (a worker thread blocked in a system call or in native code cannot be interrupted): it
   * is then abandoned, and may go on running until that call returns.
   */
  terminate(): Promise<boolean>;
}
