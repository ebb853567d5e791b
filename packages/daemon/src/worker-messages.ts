/**
 * The one envelope of every message between a daemon thread and a worker thread or plugin
 * process (plugins/wire.ts, the plugin transpiler, the WAL checkpointer, the token counting
 * worker): an object tagged by `t`, the kind of message, with its fields beside the tag. A
 * message the other side answers carries a `requestId`; the answer is a `reply` with the same id
 * and either `value` or `error`.
 * Types only: the modules that use it run inside workers too.
 */

/** An error as data: Error objects do not survive JSON (or a structured clone, whole). */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

/** The answer to the message that carried `requestId`: its value, or the error that came instead. */
export interface Reply<V> {
  t: "reply";
  requestId: number;
  value?: V;
  error?: WireError;
}
