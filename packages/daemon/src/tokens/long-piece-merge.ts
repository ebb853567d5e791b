/**
 * Byte-pair merging of one long pre-tokenized piece in O(n log n).
 *
 * gpt-tokenizer (like js-tiktoken) merges a piece by rescanning every adjacent pair for the lowest
 * rank after each merge and splicing arrays: O(n²) in the piece length. Ordinary text splits into
 * short pieces, but a run the pre-tokenizer keeps whole — 100,000 `=`, a long run of spaces, of
 * lowercase letters, of CJK characters — took time in the square of its length, and a long
 * enough one would never finish. This is the same algorithm (always merge the lowest-ranked pair, the leftmost one
 * on ties) with a binary heap and a linked list of parts, so it yields identical tokens.
 */

/** Rank of the bytes [start, end) of the piece, or undefined when they are not a token. */
export type RankOfRange = (start: number, end: number) => number | undefined;

/** The tokens of a piece of `length` bytes. */
export type MergeLongPiece = (length: number, rankOf: RankOfRange) => number[];

/** Heap keys: rank * 2^32 + the part's first byte. */
const SHIFT = 4294967296;

/** A min-heap of numbers in a growing Float64Array. */
class KeyHeap {
  private keys: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.keys = new Float64Array(capacity);
  }

  push(key: number): void {
    if (this.size === this.keys.length) {
      const grown = new Float64Array(this.keys.length * 2);
      grown.set(this.keys);
      this.keys = grown;
    }
    const heap = this.keys;
    let index = this.size++;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const parentKey = heap[parent]!;
      if (parentKey <= key) break;
      heap[index] = parentKey;
      index = parent;
    }
    heap[index] = key;
  }

  pop(): number {
    const heap = this.keys;
    const top = heap[0]!;
    const last = heap[--this.size]!;
    let index = 0;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && heap[child + 1]! < heap[child]!) child++;
      if (heap[child]! >= last) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
    return top;
  }
}

export function mergeLongPiece(length: number, rankOf: RankOfRange): number[] {
  const END = length;
  // Parts are named by their first byte. next[s] is the first byte of the following part (END
  // after the last one), or -1 once part s has been merged into its left neighbour.
  const next = new Int32Array(length + 1);
  const prev = new Int32Array(length + 1);
  // Every part is a token (a byte, or a merge of two tokens); token[s] is part s's.
  const token = new Int32Array(length + 1);
  // Rank of the token that merging part s with the following part would make; -1 for none.
  const pairRank = new Int32Array(length + 1).fill(-1);

  // The bytes of two adjacent parts are determined by their two tokens, so the rank of their
  // merge is too: remembering it per token pair saves most lookups (which hash a fresh string).
  const PAIR = 1 << 20;
  const mergedRank = new Map<number, number>();
  const rankOfPair = (left: number, right: number, start: number, end: number): number => {
    const key = token[left]! * PAIR + token[right]!;
    let rank = mergedRank.get(key);
    if (rank === undefined) {
      rank = rankOf(start, end) ?? -1;
      mergedRank.set(key, rank);
    }
    return rank;
  };

  // Lowest rank first, then the leftmost part. Entries go stale when a part is merged away or
  // its pair rank changes; they are skipped when popped.
  const heap = new KeyHeap(Math.max(16, length));
  /** Pair rank of part `left` and the part starting at `right` (which ends at `end`). */
  const updatePair = (left: number, right: number, end: number): void => {
    const rank = right < END ? rankOfPair(left, right, left, end) : -1;
    pairRank[left] = rank;
    if (rank >= 0) heap.push(rank * SHIFT + left);
  };

  for (let start = 0; start < length; start++) {
    next[start] = start + 1;
    prev[start] = start - 1;
    token[start] = rankOf(start, start + 1) ?? -1;
  }
  for (let start = 0; start + 1 < length; start++) updatePair(start, start + 1, start + 2);

  while (heap.size > 0) {
    const key = heap.pop();
    const rank = Math.floor(key / SHIFT);
    const left = key - rank * SHIFT;
    if (next[left]! < 0 || pairRank[left] !== rank) continue; // stale entry
    const right = next[left]!;
    const afterRight = next[right]!;
    next[right] = -1;
    next[left] = afterRight;
    token[left] = rank;
    if (afterRight < END) prev[afterRight] = left;
    updatePair(left, afterRight, afterRight < END ? next[afterRight]! : END);
    const before = prev[left]!;
    if (before >= 0) updatePair(before, left, afterRight);
  }

  const tokens: number[] = [];
  for (let start = 0; start < END; start = next[start]!) {
    if (token[start]! < 0) throw new Error(`no token for byte ${start} of a piece`);
    tokens.push(token[start]!);
  }
  return tokens;
}
