/**
 * An encoding's ranks in a compact form, and exact counting with it.
 *
 * gpt-tokenizer keeps an encoding as a Map from 200,000 token strings to ranks (plus the array it
 * was built from, a decoder and a sorted list of the tokens that are not UTF-8): ~80 MB of RSS per
 * thread that loads it (bench/memory.mjs). Counting needs none of that but "is this byte sequence
 * a token, and of which rank". Here the tokens' bytes sit end to end in one Uint8Array, with
 * their offsets in a Uint32Array (index = rank), and an open-addressing hash table (Int32Array of
 * ranks, keyed by an FNV-1a hash of the bytes) answers the lookup: about 5 MB for o200k_base.
 *
 * The ranks are read straight from the bytes of gpt-tokenizer's rank-list module (`parseRankList`)
 * rather than by running it: running it makes 200,000 strings (tens of MB of heap that a thread
 * does not give back to the system once freed); reading it makes none. The tables are built in
 * shared memory by the counting worker, the only thread that loads an encoding, and handed to
 * the main thread: one copy per process, and the main thread counts small appends on the spot
 * without ever loading anything (create-counter.ts).
 *
 * Counting is the usual byte-pair encoding: the text is split with the encoding's pre-tokenizer
 * regex; a piece that is a token counts 1; otherwise its UTF-8 bytes are merged, always the
 * lowest-ranked adjacent pair first (the leftmost on ties), which is what tiktoken does: short
 * pieces by rescanning a small array, long ones with `mergeLongPiece` (O(n log n)). Counts of
 * short pieces are cached. The oracle test compares the counts with js-tiktoken's.
 *
 * Special-token texts such as `<|endoftext|>` are ordinary text here: entries are data, not prompts.
 *
 * IMPORTANT: both functions also run inside the counting worker from their source text
 * (`Function.prototype.toString`), so they must not reference anything outside their own bodies.
 */
import type { MergeLongPiece } from "./long-piece-merge.js";

/**
 * The compact form: the tokens' bytes end to end, rank r's being bytes[offsets[r], offsets[r + 1])
 * (empty: no such rank), and `slots`, the hash table (rank, or -1 for an empty slot; FNV-1a of
 * the bytes, linear probing). All three live in SharedArrayBuffers: the counting worker builds
 * them once and hands them to the main thread, which counts small appends with the same copy.
 */
export interface CompactTables {
  bytes: Uint8Array;
  offsets: Uint32Array;
  slots: Int32Array;
}

/** The exact number of tokens of a text (no estimate: see exact-count.ts for long stretches). */
export type CountPlain = (text: string) => number;

export interface CompactEncoding {
  count: CountPlain;
  /** Bytes held by the compact form (tokens, offsets, hash table), for benches. */
  tableBytes: number;
}

/**
 * Reads gpt-tokenizer's generated rank-list module (`bpeRanks/<encoding>.js`) without running it:
 * arrays `const cN = [...]`, concatenated in order, whose elements are JSON strings (the token's
 * text: its UTF-8 bytes, escapes decoded) or arrays of byte values (tokens that are not UTF-8).
 * Throws on anything else, so a changed format fails loudly (and the tests compare every rank
 * with the module's own values).
 */
export function parseRankList(source: Uint8Array): CompactTables {
  const bytes = new Uint8Array(source.length);
  let used = 0;
  let offsets = new Uint32Array(1 << 18);
  let ranks = 0;
  const fail = (at: number, what: string): never => {
    throw new Error(`unexpected rank list format at byte ${at}: ${what}`);
  };
  const startRank = (): void => {
    if (ranks + 1 >= offsets.length) {
      const grown = new Uint32Array(offsets.length * 2);
      grown.set(offsets);
      offsets = grown;
    }
    offsets[ranks++] = used;
  };
  const putCodePoint = (code: number): void => {
    if (code < 0x80) bytes[used++] = code;
    else if (code < 0x800) {
      bytes[used++] = 0xc0 | (code >> 6);
      bytes[used++] = 0x80 | (code & 0x3f);
    } else {
      bytes[used++] = 0xe0 | (code >> 12);
      bytes[used++] = 0x80 | ((code >> 6) & 0x3f);
      bytes[used++] = 0x80 | (code & 0x3f);
    }
  };
  const isSpace = (byte: number): boolean => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
  const hex = (at: number): number => {
    const text = String.fromCharCode(source[at]!, source[at + 1]!, source[at + 2]!, source[at + 3]!);
    if (!/^[0-9a-fA-F]{4}$/.test(text)) fail(at, "bad \\u escape");
    return parseInt(text, 16);
  };
  // \n \t \r \b \f \" \\ \/ and the byte each stands for.
  const ESCAPES = new Map<number, number>([
    [0x6e, 0x0a], [0x74, 0x09], [0x72, 0x0d], [0x62, 0x08], [0x66, 0x0c], [0x22, 0x22], [0x5c, 0x5c], [0x2f, 0x2f],
  ]);
  const marker = [0x63, 0x6f, 0x6e, 0x73, 0x74, 0x20, 0x63]; // "const c"
  const startsAt = (at: number, sequence: readonly number[]): boolean => sequence.every((byte, index) => source[at + index] === byte);

  let at = 0;
  for (;;) {
    // The next chunk: "const c<digits> = [".
    while (at < source.length && !startsAt(at, marker)) at++;
    if (at >= source.length) break;
    at += marker.length;
    while (source[at]! >= 0x30 && source[at]! <= 0x39) at++;
    if (!startsAt(at, [0x20, 0x3d, 0x20, 0x5b])) fail(at, "expected ' = ['");
    at += 4;
    for (;;) {
      while (isSpace(source[at]!) || source[at] === 0x2c) at++;
      const byte = source[at];
      if (byte === 0x5d) {
        at++;
        break;
      }
      startRank();
      if (byte === 0x22) {
        // A string: raw UTF-8 bytes are the token's bytes; escapes are decoded.
        for (at++; source[at] !== 0x22; ) {
          if (at >= source.length) fail(at, "unterminated string");
          if (source[at] !== 0x5c) {
            bytes[used++] = source[at++]!;
            continue;
          }
          const escaped = source[at + 1]!;
          const stands = ESCAPES.get(escaped);
          if (escaped === 0x75) {
            const code = hex(at + 2);
            if (code >= 0xd800 && code <= 0xdfff) fail(at, "surrogate escape");
            putCodePoint(code);
            at += 6;
          } else if (stands !== undefined) {
            bytes[used++] = stands;
            at += 2;
          } else {
            fail(at, "unknown escape");
          }
        }
        at++;
      } else if (byte === 0x5b) {
        // Bytes as numbers: [161, 162].
        for (at++; ; ) {
          while (isSpace(source[at]!) || source[at] === 0x2c) at++;
          if (source[at] === 0x5d) {
            at++;
            break;
          }
          let value = 0;
          const from = at;
          while (source[at]! >= 0x30 && source[at]! <= 0x39) value = value * 10 + source[at++]! - 0x30;
          if (at === from || value > 255) fail(from, "expected a byte value");
          bytes[used++] = value;
        }
      } else {
        fail(at, "expected a string or an array of bytes");
      }
    }
  }
  if (ranks === 0) fail(0, "no ranks found");
  offsets[ranks] = used;

  // Into shared memory, with the hash table.
  const sharedBytes = new Uint8Array(new SharedArrayBuffer(used));
  sharedBytes.set(bytes.subarray(0, used));
  const sharedOffsets = new Uint32Array(new SharedArrayBuffer((ranks + 1) * 4));
  sharedOffsets.set(offsets.subarray(0, ranks + 1));
  let size = 1;
  while (size < ranks * 2) size *= 2;
  const slots = new Int32Array(new SharedArrayBuffer(size * 4)).fill(-1);
  for (let rank = 0; rank < ranks; rank++) {
    const start = sharedOffsets[rank]!;
    const end = sharedOffsets[rank + 1]!;
    if (end === start) continue;
    let hash = 0x811c9dc5;
    for (let index = start; index < end; index++) hash = Math.imul(hash ^ sharedBytes[index]!, 0x01000193);
    for (let slot = (hash >>> 0) & (size - 1); ; slot = (slot + 1) & (size - 1)) {
      const other = slots[slot]!;
      if (other < 0) {
        slots[slot] = rank;
        break;
      }
      // The same bytes twice keep the first (lowest) rank; none is expected.
      const from = sharedOffsets[other]!;
      const same = (index: number): boolean => sharedBytes[from + index] === sharedBytes[start + index];
      let equal = sharedOffsets[other + 1]! - from === end - start;
      for (let index = 0; equal && index < end - start; index++) equal = same(index);
      if (equal) break;
    }
  }
  return { bytes: sharedBytes, offsets: sharedOffsets, slots };
}

export function createCompactCount(
  { bytes, offsets, slots }: CompactTables,
  splitRegex: RegExp,
  mergeLongPiece: MergeLongPiece,
  longPieceMinChars: number,
): CompactEncoding {
  const utf8 = new TextEncoder();
  const mask = slots.length - 1;
  const hashOf = (buffer: Uint8Array, start: number, end: number): number => {
    let hash = 0x811c9dc5;
    for (let index = start; index < end; index++) hash = Math.imul(hash ^ buffer[index]!, 0x01000193);
    return hash >>> 0;
  };
  const sameBytes = (rank: number, buffer: Uint8Array, start: number, end: number): boolean => {
    const from = offsets[rank]!;
    if (offsets[rank + 1]! - from !== end - start) return false;
    for (let index = start; index < end; index++) if (bytes[from + index - start] !== buffer[index]) return false;
    return true;
  };
  /** The rank of buffer[start, end), or -1 when those bytes are not a token. */
  const lookup = (buffer: Uint8Array, start: number, end: number): number => {
    for (let slot = hashOf(buffer, start, end) & mask; ; slot = (slot + 1) & mask) {
      const rank = slots[slot]!;
      if (rank < 0 || sameBytes(rank, buffer, start, end)) return rank;
    }
  };

  // ---- counting -----------------------------------------------------------------------------------
  let scratch = new Uint8Array(4096);
  const rankInScratch = (start: number, end: number): number | undefined => {
    const rank = lookup(scratch, start, end);
    return rank < 0 ? undefined : rank;
  };
  /** Tokens of the `length` bytes in scratch that are not one token, by rescanning (short pieces). */
  const mergeShort = (length: number): number => {
    // Part i spans scratch[starts[i], starts[i + 1]); pairRanks[i] is the rank of parts i and i + 1 merged.
    const starts: number[] = [];
    for (let index = 0; index <= length; index++) starts.push(index);
    const pairRanks: number[] = [];
    for (let index = 0; index + 1 < length; index++) pairRanks.push(lookup(scratch, index, index + 2));
    const pairRank = (part: number): number => lookup(scratch, starts[part]!, starts[part + 2]!);
    for (;;) {
      let best = -1;
      let bestRank = Number.MAX_SAFE_INTEGER;
      for (let pair = 0; pair < pairRanks.length; pair++) {
        const rank = pairRanks[pair]!;
        if (rank >= 0 && rank < bestRank) {
          bestRank = rank;
          best = pair;
        }
      }
      if (best < 0) return starts.length - 1;
      starts.splice(best + 1, 1);
      pairRanks.splice(best, 1);
      if (best < pairRanks.length) pairRanks[best] = pairRank(best);
      if (best > 0) pairRanks[best - 1] = pairRank(best - 1);
    }
  };
  const countPiece = (piece: string): number => {
    if (piece.length * 3 > scratch.length) scratch = new Uint8Array(piece.length * 3 + 4096);
    const length = utf8.encodeInto(piece, scratch).written;
    if (lookup(scratch, 0, length) >= 0) return 1;
    return length < longPieceMinChars ? mergeShort(length) : mergeLongPiece(length, rankInScratch).length;
  };
  // Counts of short pieces seen before: prose repeats its words. Cleared when full, which costs
  // nothing per piece (an LRU's eviction would).
  const cache = new Map<string, number>();
  const CACHE_SIZE = 50_000;
  // Sticky: each piece starts where the previous one ended (the pre-tokenizer's alternatives cover
  // every character), so `test` and `lastIndex` find the pieces without allocating match arrays,
  // which cost a quarter of the time in garbage collection.
  const pieces = new RegExp(splitRegex.source, splitRegex.flags.replace("g", "") + "y");
  const count = (text: string): number => {
    let total = 0;
    for (let start = 0; start < text.length; ) {
      pieces.lastIndex = start;
      // Never expected to fail; if it did, the character would be a piece of its own.
      const end = pieces.test(text) && pieces.lastIndex > start ? pieces.lastIndex : start + 1;
      const piece = text.slice(start, end);
      start = end;
      if (piece.length >= longPieceMinChars) {
        total += countPiece(piece);
        continue;
      }
      let tokens = cache.get(piece);
      if (tokens === undefined) {
        tokens = countPiece(piece);
        if (cache.size >= CACHE_SIZE) cache.clear();
        cache.set(piece, tokens);
      }
      total += tokens;
    }
    return total;
  };
  return { count, tableBytes: bytes.byteLength + offsets.byteLength + slots.byteLength };
}
