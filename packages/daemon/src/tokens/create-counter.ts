/**
 * The two `TokenCounter`s: exact (gpt-tokenizer, `o200k_base` or `cl100k_base`) and pi's
 * `chars4` estimate. Both measure the same text, `entryContextText(entry)`.
 *
 * Where exact counts run: in the counting worker, and only there. Loading an encoding blocks its
 * thread for 0.35 s on an idle core (seconds on a busy one) and takes tens of MB, so the daemon
 * keeps one copy per process, in the thread that counts; the main thread never loads one (a
 * test checks it). A small count is a round trip to the worker (~0.1 ms on an idle machine);
 * an append's reply waits for it, but the append itself is stored on arrival
 * (sessions/token-ledger.ts), so nothing queues behind a count.
 *
 * Texts above `chunkChars` are split at piece boundaries (chunks.ts) and counted chunk by chunk
 * behind interactive work, so a 10 MB tool result never holds up other appends for long.
 */
import { safeSplits } from "./chunks.js";
import { CountWorker } from "./count-worker.js";
import type { TokenCounter, TokenCounterOptions } from "./counter.js";
import { chars4Tokens, CHARS_PER_TOKEN, entryContextText, IMAGE_TOKENS, type EntryContextText } from "./entry-text.js";
import type { EntryInput, SessionEntry } from "@base-context/protocol";
import type { Lane } from "./count-worker.js";

export interface CounterPolicy {
  /** Texts longer than this are counted in chunks of about this size (~2 ms of prose each). */
  chunkChars: number;
}

/** Longest stretch of splitting work on the calling thread before it lets the event loop run. */
const MAX_SLICE_MS = 4;

export const DEFAULT_COUNTER_POLICY: CounterPolicy = {
  chunkChars: 65536,
};

export function createTokenCounter(options: TokenCounterOptions, policy: Partial<CounterPolicy> = {}): TokenCounter {
  const frozen = Object.freeze({ ...options });
  return options.estimator === "chars4"
    ? new Chars4Counter(frozen)
    : new ExactCounter(frozen, { ...DEFAULT_COUNTER_POLICY, ...policy });
}

class Chars4Counter implements TokenCounter {
  constructor(readonly options: TokenCounterOptions) {}

  countText(text: string): number {
    return Math.ceil(text.length / CHARS_PER_TOKEN);
  }

  async countTextAsync(text: string): Promise<number> {
    return this.countText(text);
  }

  async countEntry(entry: SessionEntry): Promise<number> {
    return chars4Tokens(entryContextText(entry));
  }

  countEntriesNow(entries: readonly (SessionEntry | EntryInput)[]): number[] {
    return entries.map((entry) => chars4Tokens(entryContextText(asCountable(entry))));
  }

  async countEntriesInBackground(entries: readonly SessionEntry[]): Promise<number[]> {
    return this.countEntriesNow(entries);
  }

  async warmUp(): Promise<void> {}

  async dispose(): Promise<void> {}
}

/**
 * Counting reads an entry's body only (entryContextText: message content, summaries), so an
 * input without its id, parentId or timestamp yet counts the same as the stored entry.
 */
function asCountable(entry: SessionEntry | EntryInput): SessionEntry {
  return entry as SessionEntry;
}

class ExactCounter implements TokenCounter {
  private readonly worker: CountWorker;

  constructor(
    readonly options: TokenCounterOptions,
    private readonly policy: CounterPolicy,
  ) {
    this.worker = new CountWorker(options.encoding);
  }

  countTextAsync(text: string): Promise<number> {
    return this.countTextIn(text, "interactive");
  }

  async countEntry(entry: SessionEntry): Promise<number> {
    const { text, images } = entryContextText(entry);
    return (await this.countTextAsync(text)) + images * IMAGE_TOKENS;
  }

  async countEntriesInBackground(entries: readonly SessionEntry[]): Promise<number[]> {
    return Promise.all(
      entries.map(async (entry) => {
        const { text, images } = entryContextText(entry);
        return (await this.countTextIn(text, "background")) + images * IMAGE_TOKENS;
      }),
    );
  }

  warmUp(): Promise<void> {
    return this.worker.warmUp();
  }

  dispose(): Promise<void> {
    return this.worker.dispose();
  }

  /** An async count in a given lane of the worker (large texts in chunks, in that lane). */
  private countTextIn(text: string, lane: Lane): Promise<number> {
    if (!text) return Promise.resolve(0);
    if (text.length <= this.policy.chunkChars) return this.worker.count(text, lane);
    return this.countInChunks(text, lane === "interactive" ? "bulk" : lane);
  }

  /**
   * Hands a large text to the worker chunk by chunk as the splits are found, pausing whenever
   * finding them has taken `MAX_SLICE_MS` (10 MB without a split point takes ~40 ms to search).
   */
  private async countInChunks(text: string, lane: Lane): Promise<number> {
    const counts: Promise<number>[] = [];
    const countChunk = (chunk: string) => {
      const count = this.worker.count(chunk, lane);
      // Rejections are read by Promise.all below; until then they must not count as unhandled.
      count.catch(() => undefined);
      counts.push(count);
    };
    let start = 0;
    let sliceStarted = performance.now();
    for (const split of safeSplits(text, this.policy.chunkChars)) {
      if (split !== null) {
        countChunk(text.slice(start, split));
        start = split;
      }
      if (performance.now() - sliceStarted > MAX_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
    }
    countChunk(text.slice(start));
    return (await Promise.all(counts)).reduce((sum, count) => sum + count, 0);
  }
}
