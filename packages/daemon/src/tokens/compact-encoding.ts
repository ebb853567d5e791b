/**
 * An encoding's ranks in a compact form, and exact counting with it.
 *
 * gpt-tokenizer keeps an encoding as a Map from 200,000 token strings to ranks (plus the array it
 * was built from, a decoder and a sorted list of the tokens that are not UTF-8): tens of MB of RSS
 * per thread that loads it (bench/memory.mjs). Counting needs none of that but "is this byte
 * sequence a token, and of which rank". Here the tokens' bytes sit end to end in one Uint8Array,
 * with their offsets in a Uint32Array (index = rank), and an open-addressing hash table
 * (Int32Array of ranks, keyed by an FNV-1a hash of the bytes) answers the lookup: a small fraction
 * of that memory (bench/results/tokens.md).
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
 */
import { mergeLongPiece } from "./long-piece-merge.js";

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

/** FNV-1a of buffer[start, end): the hash table's key. */
function fnv1a(buffer: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index++) hash = Math.imul(hash ^ buffer[index]!, 0x01000193);
  return hash >>> 0;
}

/** What parseRankList has read so far: the tokens' bytes end to end, and where each rank starts. */
class RankBytes {
  readonly bytes: Uint8Array;
  used = 0;
  offsets = new Uint32Array(1 << 18);
  ranks = 0;

  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
  }

  startRank(): void {
    if (this.ranks + 1 >= this.offsets.length) {
      const grown = new Uint32Array(this.offsets.length * 2);
      grown.set(this.offsets);
      this.offsets = grown;
    }
    this.offsets[this.ranks++] = this.used;
  }

  put(byte: number): void {
    this.bytes[this.used++] = byte;
  }

  /** A code point below U+10000 (what a `\u` escape that is no surrogate stands for), in UTF-8. */
  putCodePoint(code: number): void {
    if (code < 0x80) this.put(code);
    else if (code < 0x800) {
      this.put(0xc0 | (code >> 6));
      this.put(0x80 | (code & 0x3f));
    } else {
      this.put(0xe0 | (code >> 12));
      this.put(0x80 | ((code >> 6) & 0x3f));
      this.put(0x80 | (code & 0x3f));
    }
  }
}

// \n \t \r \b \f \" \\ \/ and the byte each stands for.
const ESCAPES = new Map<number, number>([
  [0x6e, 0x0a], [0x74, 0x09], [0x72, 0x0d], [0x62, 0x08], [0x66, 0x0c], [0x22, 0x22], [0x5c, 0x5c], [0x2f, 0x2f],
]);
/** "const c": where each array of the module starts. */
const CHUNK_MARKER = [0x63, 0x6f, 0x6e, 0x73, 0x74, 0x20, 0x63];

/** A cursor over the rank-list module's bytes, reading its tokens into a RankBytes. */
class RankListReader {
  at = 0;

  constructor(
    private readonly source: Uint8Array,
    private readonly out: RankBytes,
  ) {}

  fail(at: number, what: string): never {
    throw new Error(`unexpected rank list format at byte ${at}: ${what}`);
  }

  private startsAt(at: number, sequence: readonly number[]): boolean {
    return sequence.every((byte, index) => this.source[at + index] === byte);
  }

  private skipSeparators(): void {
    for (let byte = this.source[this.at]; byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x2c; ) {
      byte = this.source[++this.at];
    }
  }

  /** Moves past the next chunk's "const c<digits> = ["; false when there is none. */
  nextChunk(): boolean {
    const source = this.source;
    while (this.at < source.length && !this.startsAt(this.at, CHUNK_MARKER)) this.at++;
    if (this.at >= source.length) return false;
    this.at += CHUNK_MARKER.length;
    while (source[this.at]! >= 0x30 && source[this.at]! <= 0x39) this.at++;
    if (!this.startsAt(this.at, [0x20, 0x3d, 0x20, 0x5b])) this.fail(this.at, "expected ' = ['");
    this.at += 4;
    return true;
  }

  /** The chunk's tokens, up to its closing bracket. */
  readChunk(): void {
    for (;;) {
      this.skipSeparators();
      const byte = this.source[this.at];
      if (byte === 0x5d) {
        this.at++;
        return;
      }
      this.out.startRank();
      if (byte === 0x22) this.readString();
      else if (byte === 0x5b) this.readByteValues();
      else this.fail(this.at, "expected a string or an array of bytes");
    }
  }

  /** A string: raw UTF-8 bytes are the token's bytes; escapes are decoded. */
  private readString(): void {
    const source = this.source;
    for (this.at++; source[this.at] !== 0x22; ) {
      if (this.at >= source.length) this.fail(this.at, "unterminated string");
      if (source[this.at] !== 0x5c) {
        this.out.put(source[this.at++]!);
        continue;
      }
      const escaped = source[this.at + 1]!;
      const stands = ESCAPES.get(escaped);
      if (escaped === 0x75) {
        const code = this.hex(this.at + 2);
        if (code >= 0xd800 && code <= 0xdfff) this.fail(this.at, "surrogate escape");
        this.out.putCodePoint(code);
        this.at += 6;
      } else if (stands !== undefined) {
        this.out.put(stands);
        this.at += 2;
      } else {
        this.fail(this.at, "unknown escape");
      }
    }
    this.at++;
  }

  private hex(at: number): number {
    const source = this.source;
    const text = String.fromCharCode(source[at]!, source[at + 1]!, source[at + 2]!, source[at + 3]!);
    if (!/^[0-9a-fA-F]{4}$/.test(text)) this.fail(at, "bad \\u escape");
    return parseInt(text, 16);
  }

  /** Bytes as numbers: [161, 162]. */
  private readByteValues(): void {
    const source = this.source;
    for (this.at++; ; ) {
      this.skipSeparators();
      if (source[this.at] === 0x5d) {
        this.at++;
        return;
      }
      let value = 0;
      const from = this.at;
      while (source[this.at]! >= 0x30 && source[this.at]! <= 0x39) value = value * 10 + source[this.at++]! - 0x30;
      if (this.at === from || value > 255) this.fail(from, "expected a byte value");
      this.out.put(value);
    }
  }
}

/**
 * Reads gpt-tokenizer's generated rank-list module (`bpeRanks/<encoding>.js`) without running it:
 * arrays `const cN = [...]`, concatenated in order, whose elements are JSON strings (the token's
 * text: its UTF-8 bytes, escapes decoded) or arrays of byte values (tokens that are not UTF-8).
 * Throws on anything else, so a changed format fails loudly (and the tests compare every rank
 * with the module's own values).
 */
export function parseRankList(source: Uint8Array): CompactTables {
  const read = new RankBytes(source.length);
  const reader = new RankListReader(source, read);
  while (reader.nextChunk()) reader.readChunk();
  if (read.ranks === 0) reader.fail(0, "no ranks found");
  read.offsets[read.ranks] = read.used;
  return sharedTables(read);
}

/** What was read, in shared memory, with the hash table. */
function sharedTables(read: RankBytes): CompactTables {
  const { used, ranks } = read;
  const bytes = new Uint8Array(new SharedArrayBuffer(used));
  bytes.set(read.bytes.subarray(0, used));
  const offsets = new Uint32Array(new SharedArrayBuffer((ranks + 1) * 4));
  offsets.set(read.offsets.subarray(0, ranks + 1));
  let size = 1;
  while (size < ranks * 2) size *= 2;
  const slots = new Int32Array(new SharedArrayBuffer(size * 4)).fill(-1);
  const lookup = tableLookup({ bytes, offsets, slots });
  for (let rank = 0; rank < ranks; rank++) {
    const start = offsets[rank]!;
    const end = offsets[rank + 1]!;
    if (end === start) continue;
    // The same bytes twice keep the first (lowest) rank; none is expected.
    if (lookup(bytes, start, end) >= 0) continue;
    let slot = fnv1a(bytes, start, end) & (size - 1);
    while (slots[slot]! >= 0) slot = (slot + 1) & (size - 1);
    slots[slot] = rank;
  }
  return { bytes, offsets, slots };
}

/** The rank of buffer[start, end), or -1 when those bytes are not a token. */
type Lookup = (buffer: Uint8Array, start: number, end: number) => number;

function tableLookup({ bytes, offsets, slots }: CompactTables): Lookup {
  const mask = slots.length - 1;
  const sameBytes = (rank: number, buffer: Uint8Array, start: number, end: number): boolean => {
    const from = offsets[rank]!;
    if (offsets[rank + 1]! - from !== end - start) return false;
    for (let index = start; index < end; index++) if (bytes[from + index - start] !== buffer[index]) return false;
    return true;
  };
  return (buffer, start, end) => {
    for (let slot = fnv1a(buffer, start, end) & mask; ; slot = (slot + 1) & mask) {
      const rank = slots[slot]!;
      if (rank < 0 || sameBytes(rank, buffer, start, end)) return rank;
    }
  };
}

/** Tokens of the `length` bytes of `scratch` that are not one token, by rescanning (short pieces). */
function mergeShort(lookup: Lookup, scratch: Uint8Array, length: number): number {
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
}

/** The tokens of one piece: 1 when it is a token, else its UTF-8 bytes merged. */
function pieceCounter(lookup: Lookup, longPieceMinChars: number): (piece: string) => number {
  const utf8 = new TextEncoder();
  let scratch = new Uint8Array(4096);
  const rankInScratch = (start: number, end: number): number | undefined => {
    const rank = lookup(scratch, start, end);
    return rank < 0 ? undefined : rank;
  };
  return (piece) => {
    if (piece.length * 3 > scratch.length) scratch = new Uint8Array(piece.length * 3 + 4096);
    const length = utf8.encodeInto(piece, scratch).written;
    if (lookup(scratch, 0, length) >= 0) return 1;
    return length < longPieceMinChars ? mergeShort(lookup, scratch, length) : mergeLongPiece(length, rankInScratch).length;
  };
}

/** Counts of short pieces kept at most (the cache is cleared when full). */
const CACHE_SIZE = 50_000;

export function createCompactCount(tables: CompactTables, splitRegex: RegExp, longPieceMinChars: number): CompactEncoding {
  const countPiece = pieceCounter(tableLookup(tables), longPieceMinChars);
  // Counts of short pieces seen before: prose repeats its words. Cleared when full, which costs
  // nothing per piece (an LRU's eviction would).
  const cache = new Map<string, number>();
  // Sticky: each piece starts where the previous one ended (the pre-tokenizer's alternatives cover
  // every character), so `test` and `lastIndex` find the pieces without allocating match arrays,
  // whose garbage collection cost much of the time.
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
  const { bytes, offsets, slots } = tables;
  return { count, tableBytes: bytes.byteLength + offsets.byteLength + slots.byteLength };
}
