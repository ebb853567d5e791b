/**
 * The two `TokenCounter`s: exact (gpt-tokenizer's encodings, `o200k_base` or `cl100k_base`, in
 * the compact form of compact-encoding.ts) and pi's `chars4` estimate. Both measure the same
 * text, `entryContextText(entry)`.
 *
 * Where exact counts run: the counting worker is the only thread that loads an encoding (0.2 s on
 * an idle core, seconds on a busy one: no request may wait for that). It builds the encoding's
 * tables in shared memory and hands them to this thread, so there is one copy per process; from
 * then on `countEntriesNow` counts small appends right here, and the append
 * stores its count in its own transaction, without a round trip to the worker. Until the worker
 * has loaded, and for anything larger, counts go to the worker (a round trip, longer on a busy
 * machine; bench/results/tokens.md).
 *
 * Texts above `chunkChars` are split at piece boundaries (chunks.ts) and counted chunk by chunk
 * behind interactive work, so a 10 MB tool result never holds up other appends for long.
 */
import { safeSplits } from "./chunks.js";
import { createCompactCount } from "./compact-encoding.js";
import { CountWorker } from "./count-worker.js";
import type { TokenCounter, TokenCounterOptions } from "./counter.js";
import { LONG_PIECE_MIN_CHARS, LONG_STRETCH_MIN_CHARS } from "./encodings.js";
import { createExactCount, type CountExact } from "./exact-count.js";
import { chars4Tokens, CHARS_PER_TOKEN, entryContextText, IMAGE_TOKENS, type EntryContextText } from "./entry-text.js";
import type { EntryInput, SessionEntry } from "@base-context/protocol";
import type { Lane } from "./count-worker.js";

export interface CounterPolicy {
  /**
   * Entries whose texts add up to at most this many characters may be counted on the calling
   * thread (`countEntriesNow`), once the worker has shared its tables. Sized so that the worst case
   * (a run of one character, the slowest text to count per character) stays far below a 50 ms
   * budget (bench/results/tokens.md).
   */
  syncMaxChars: number;
  /** Texts longer than this are counted in chunks of about this size (short enough not to stall the worker). */
  chunkChars: number;
}

/** Longest stretch of splitting work on the calling thread before it lets the event loop run. */
const MAX_SLICE_MS = 4;

export const DEFAULT_COUNTER_POLICY: CounterPolicy = {
  syncMaxChars: 4096,
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
  /** Counting on this thread with the worker's shared tables, and the tables it was made from. */
  private here: { count: CountExact; from: object } | undefined;

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

  countEntriesNow(entries: readonly (SessionEntry | EntryInput)[]): number[] | undefined {
    const count = this.countHere();
    if (!count) return undefined;
    const texts: EntryContextText[] = [];
    let chars = 0;
    for (const entry of entries) {
      const text = entryContextText(asCountable(entry));
      chars += text.text.length;
      if (chars > this.policy.syncMaxChars) return undefined;
      texts.push(text);
    }
    return texts.map(({ text, images }) => (text ? count(text) : 0) + images * IMAGE_TOKENS);
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

  /**
   * Counting on this thread, with the tables the worker built in shared memory (nothing is loaded
   * here: making the closures takes microseconds); undefined until the worker has loaded.
   */
  private countHere(): CountExact | undefined {
    const shared = this.worker.sharedEncoding;
    if (!shared) return undefined;
    if (this.here?.from !== shared) {
      const splitRegex = new RegExp(shared.splitRegex.source, shared.splitRegex.flags);
      const plain = createCompactCount(shared.tables, splitRegex, LONG_PIECE_MIN_CHARS).count;
      this.here = { count: createExactCount(plain, LONG_STRETCH_MIN_CHARS), from: shared };
    }
    return this.here.count;
  }

  /** An async count in a given lane of the worker (large texts in chunks, in that lane). */
  private countTextIn(text: string, lane: Lane): Promise<number> {
    if (!text) return Promise.resolve(0);
    if (text.length <= this.policy.chunkChars) return this.worker.count(text, lane);
    return this.countInChunks(text, lane === "interactive" ? "bulk" : lane);
  }

  /**
   * Hands a large text to the worker chunk by chunk as the splits are found, pausing whenever
   * finding them has taken `MAX_SLICE_MS` (a large text without a split point is slow to search).
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
