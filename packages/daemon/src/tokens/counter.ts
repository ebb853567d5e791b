/**
 * Token counting behind one small interface (PRODUCT.md §5 "Token counts"). Counts are computed
 * once per entry at append time and stored; `countEntry` is the only way the rest of the daemon
 * asks for them. `createTokenCounter` (tokens/index.ts) makes one.
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
  /**
   * Tokens of a piece of text, on the calling thread. The first exact count loads the encoding
   * there (blocks ~0.35 s), and huge inputs take long: prefer `countTextAsync` in the daemon.
   */
  countText(text: string): number;
  /** Same count, but never blocks the event loop for long (counting happens in a worker). */
  countTextAsync(text: string): Promise<number>;
  /** Tokens an entry contributes to the context (0 for entries that are not in the context). */
  countEntry(entry: SessionEntry): Promise<number>;
  /** Stops the counting worker, if one was started; pending async counts are rejected. */
  dispose(): Promise<void>;
}
