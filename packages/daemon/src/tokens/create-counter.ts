/**
 * The two `TokenCounter`s: exact (gpt-tokenizer, `o200k_base` or `cl100k_base`) and pi's
 * `chars4` estimate. Both measure the same text, `entryContextText(entry)`.
 *
 * Where exact counts run (numbers from bench/tokens.mjs on a 2-core machine):
 * - Loading an encoding blocks its thread ~0.35 s and adds ~70 MB of peak RSS. So the counter
 *   never loads one on the calling thread by itself (`loadOnCallingThread: false`): async counts
 *   go to the worker (a round trip costs ~0.07 ms for a small entry on an idle machine; an append
 *   over stdio waits ~0.8 ms instead of ~0.4 ms), and only one copy of the encoding exists.
 * - If the calling thread has the encoding anyway (someone used the synchronous `countText`, or
 *   the daemon called `loadOnCallingThread`), small texts are counted right there, skipping the
 *   round trip; `countEntriesNow` lets an append count before it is stored.
 * - When to load it there is a rent-or-buy decision (load-rent.ts): the daemon does it after a
 *   pause of a second, or once small counts have spent about as long waiting for the worker as
 *   the load costs (`whenCallingThreadLoadPaysOff`), whichever comes first.
 * - Texts above `chunkChars` are split at piece boundaries (chunks.ts) and counted chunk by chunk
 *   behind interactive work, so a 10 MB tool result never holds up other appends for long.
 */
import { safeSplits } from "./chunks.js";
import { CountWorker } from "./count-worker.js";
import type { TokenCounter, TokenCounterOptions } from "./counter.js";
import { isExactCountLoaded, loadExactCount } from "./encodings.js";
import { chars4Tokens, CHARS_PER_TOKEN, entryContextText, IMAGE_TOKENS, type EntryContextText } from "./entry-text.js";
import { LoadRent } from "./load-rent.js";
import type { EntryInput, SessionEntry } from "@base-context/protocol";
import type { Lane } from "./count-worker.js";

export interface CounterPolicy {
  /**
   * Texts up to this length may be counted on the calling thread. Sized so that the worst case
   * (a run of one character, ~0.4 µs per character: 4,096 take ~1.5 ms) stays well under the
   * 50 ms budget; prose costs ~0.05 µs per character.
   */
  syncMaxChars: number;
  /** Load the encoding on the calling thread for small texts (one ~0.35 s stall, second copy). */
  loadOnCallingThread: boolean;
  /** Texts longer than this are counted in chunks of about this size (~2 ms of prose each). */
  chunkChars: number;
  /**
   * What loading the encoding on the calling thread costs, in ms, for the rent-or-buy rule
   * (`whenCallingThreadLoadPaysOff`). Undefined: as long as the worker took to load its copy
   * (the same work on another thread of the same machine), or `DEFAULT_LOAD_COST_MS` until it has.
   */
  loadCostMs?: number | undefined;
}

/**
 * The cost of loading o200k_base on a thread when nothing better is known: bench/tokens.mjs
 * measures 0.35–0.4 s on an idle core of a 2-core machine (load and first count).
 */
export const DEFAULT_LOAD_COST_MS = 400;

/** Longest stretch of splitting work on the calling thread before it lets the event loop run. */
const MAX_SLICE_MS = 4;
/**
 * Longest stretch of small counts on the calling thread before it lets the event loop run: a
 * thousand entries read or appended at once are counted in slices, not in one 35 ms block.
 */
const MAX_COUNT_SLICE_MS = 8;

export const DEFAULT_COUNTER_POLICY: CounterPolicy = {
  syncMaxChars: 4096,
  loadOnCallingThread: false,
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

  loadOnCallingThread(): void {}

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
  /** Time small counts have waited for the worker, against the cost of loading the encoding here. */
  private readonly rent: LoadRent;
  /** When the current stretch of counts on this thread began (-1: none since the event loop last ran). */
  private countSliceStarted = -1;

  constructor(
    readonly options: TokenCounterOptions,
    private readonly policy: CounterPolicy,
  ) {
    const worker = new CountWorker(options.encoding);
    this.worker = worker;
    this.rent = new LoadRent(() => policy.loadCostMs ?? worker.encodingLoadMs ?? DEFAULT_LOAD_COST_MS);
  }

  countText(text: string): number {
    return text ? loadExactCount(this.options.encoding)(text) : 0;
  }

  async countTextAsync(text: string): Promise<number> {
    if (!text) return 0;
    if (text.length > this.policy.syncMaxChars) return this.countTextIn(text, "interactive");
    if (this.countsOnCallingThread()) return this.countOnThisThread(text);
    // Waiting for the worker's own start-up is not rent: the worker is needed anyway (large
    // texts, backfills), and loading here would not have been any faster.
    if (!this.worker.ready) return this.countTextIn(text, "interactive");
    // A round trip this thread could have saved with the encoding loaded: rent (load-rent.ts).
    this.rent.begin();
    try {
      return await this.countTextIn(text, "interactive");
    } finally {
      this.rent.end();
    }
  }

  async countEntry(entry: SessionEntry): Promise<number> {
    const { text, images } = entryContextText(entry);
    return (await this.countTextAsync(text)) + images * IMAGE_TOKENS;
  }

  countEntriesNow(entries: readonly (SessionEntry | EntryInput)[]): number[] | undefined {
    if (!this.countsOnCallingThread()) return undefined;
    const texts: EntryContextText[] = [];
    let chars = 0;
    for (const entry of entries) {
      const text = entryContextText(asCountable(entry));
      chars += text.text.length;
      if (chars > this.policy.syncMaxChars) return undefined;
      texts.push(text);
    }
    const count = loadExactCount(this.options.encoding);
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

  loadOnCallingThread(): void {
    loadExactCount(this.options.encoding);
  }

  whenCallingThreadLoadPaysOff(): Promise<void> {
    return this.rent.whenPaidOff();
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

  /** A small count here, after letting the event loop run if this thread has counted for a while. */
  private async countOnThisThread(text: string): Promise<number> {
    for (;;) {
      const now = performance.now();
      if (this.countSliceStarted < 0) {
        this.countSliceStarted = now;
        // Once the event loop comes round, a new stretch begins.
        setImmediate(() => (this.countSliceStarted = -1));
      } else if (now - this.countSliceStarted > MAX_COUNT_SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      return this.countText(text);
    }
  }

  private countsOnCallingThread(): boolean {
    return this.policy.loadOnCallingThread || isExactCountLoaded(this.options.encoding);
  }
}
