/**
 * Token counting behind one small interface (PRODUCT.md §5 "Token counts"). Counts are computed
 * once per entry at append time and stored; `countEntry` is the only way the rest of the daemon
 * asks for them.
 */
import type { SessionEntry } from "@base-context/protocol";

export type Encoding = "o200k_base" | "cl100k_base";
export type Estimator = "exact" | "chars4";

export interface TokenCounterOptions {
  encoding: Encoding;
  estimator: Estimator;
}

export interface TokenCounter {
  readonly options: TokenCounterOptions;
  /** Tokens of a piece of text. May be slow for huge inputs: prefer `countTextAsync` there. */
  countText(text: string): number;
  /** Same count, but never blocks the event loop for long (large inputs go to a worker). */
  countTextAsync(text: string): Promise<number>;
  /** Tokens an entry contributes to the context (0 for entries that are not in the context). */
  countEntry(entry: SessionEntry): Promise<number>;
}
