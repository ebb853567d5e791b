/**
 * Token counting behind one small interface (docs/design.md#token-counting). Counts are computed
 * once per entry at append time and stored; `countEntry` is the only way the rest of the daemon
 * asks for them. `createTokenCounter` (tokens/index.ts) makes one.
 */
import type { EntryInput, SessionEntry } from "@base-context/protocol";

export type Encoding = "o200k_base" | "cl100k_base";
export type Estimator = "exact" | "chars4";

export interface TokenCounterOptions {
  encoding: Encoding;
  estimator: Estimator;
}

export interface TokenCounter {
  readonly options: TokenCounterOptions;
  /**
   * Tokens of a piece of text, on the calling thread. The first exact count loads the encoding
   * there (blocks ~0.35 s), and huge inputs take long: prefer `countTextAsync` in the daemon.
   */
  countText(text: string): number;
  /** Same count, but never blocks the event loop for long (counting happens in a worker). */
  countTextAsync(text: string): Promise<number>;
  /** Tokens an entry contributes to the context (0 for entries that are not in the context). */
  countEntry(entry: SessionEntry): Promise<number>;
  /**
   * The counts of `entries`, computed right now on the calling thread when that is cheap, else
   * undefined (count them asynchronously). chars4 always can; an exact counter can once its
   * encoding is loaded on this thread (`loadOnCallingThread`) and the entries' texts add up to at
   * most its `syncMaxChars`. An entry's count depends on its body only, never on its id, parentId
   * or timestamp, so entries can be counted before the store assigns those.
   */
  countEntriesNow?(entries: readonly (SessionEntry | EntryInput)[]): number[] | undefined;
  /** Counts at the lowest priority, behind every other count (backfills of missing counts). */
  countEntriesInBackground?(entries: readonly SessionEntry[]): Promise<number[]>;
  /** Starts what async counts need (the worker, which loads the encoding) without blocking this thread. */
  warmUp?(): Promise<void>;
  /**
   * Loads the encoding on the calling thread so that small counts skip the worker. Blocks this
   * thread once (~0.35 s for o200k_base on an idle core) and keeps a second copy (~70 MB): call it
   * when nothing is waiting.
   */
  loadOnCallingThread?(): void;
  /**
   * Resolves once small counts (ones the calling thread could have done with the encoding loaded)
   * have spent about as long waiting for the worker as loading the encoding here would take: from
   * then on `loadOnCallingThread` pays for itself (rent or buy, see load-rent.ts). Call it between
   * requests, not in the middle of one. Never resolves while no such count waits (chars4 has no
   * worker and does not have this; nor when the encoding is already loaded on this thread).
   */
  whenCallingThreadLoadPaysOff?(): Promise<void>;
  /** Stops the counting worker, if one was started; pending async counts are rejected. */
  dispose(): Promise<void>;
}
