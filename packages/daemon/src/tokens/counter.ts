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
  /** Tokens of a piece of text (exact: counted in the counting worker). */
  countTextAsync(text: string): Promise<number>;
  /** Tokens an entry contributes to the context (0 for entries that are not in the context). */
  countEntry(entry: SessionEntry): Promise<number>;
  /**
   * The counts of `entries`, computed right now on the calling thread when that is cheap, else
   * undefined (count them asynchronously). chars4 always can; the exact counter can once its worker
   * has loaded the encoding and shared its tables, for entries of at most `syncMaxChars` in all
   * (it never loads an encoding on the calling thread). An entry's count depends on its body only,
   * never on its id, parentId or timestamp, so entries can be counted before the store assigns those.
   */
  countEntriesNow?(entries: readonly (SessionEntry | EntryInput)[]): number[] | undefined;
  /** Counts at the lowest priority, behind every other count (backfills of missing counts). */
  countEntriesInBackground?(entries: readonly SessionEntry[]): Promise<number[]>;
  /** Starts what async counts need (the worker, which loads the encoding) without blocking this thread. */
  warmUp?(): Promise<void>;
  /** Stops the counting worker, if one was started; pending async counts are rejected. */
  dispose(): Promise<void>;
}
