/**
 * Splitting a large text into chunks whose token counts add up to the text's count, so the
 * worker can count it chunk by chunk and let other counts in between.
 *
 * A split is safe where the encoding's pre-tokenizer ends a piece whatever comes next, because
 * the piece that starts there depends only on the text after it (the o200k_base and cl100k_base
 * patterns look ahead, never behind). Two such places, found with native string search:
 * - after a line break followed by a character that is neither whitespace nor `/`: a piece
 *   holding a line break is whitespace, or punctuation followed by line breaks (and, in o200k,
 *   slashes), and cannot go on into such a character;
 * - after a letter followed by a character that is not a letter, a combining mark or `'`: a
 *   letter piece can only go on with letters, marks, or a contraction (`'s`, `'ll`, …).
 * tokens/chunks.test.ts checks the sums on both encodings.
 *
 * A text with no such place (a long run of one character) stays one chunk. Nor is a text split
 * inside a long whitespace-free stretch (LONG_STRETCH_MIN_CHARS): the counter estimates such a
 * stretch as a whole (exact-count.ts), so a chunk must hold all of it for the sums to agree.
 *
 * Searching is done window by window, so a caller can split a 10 MB text in slices of bounded
 * work and let the event loop run in between (create-counter.ts does).
 */

import { LONG_STRETCH_MIN_CHARS } from "./encodings.js";

const CONTINUES_AFTER_LINE_BREAK = /[\s/]/;
const LETTER_THEN_OTHER = /\p{L}(?=[^\p{L}\p{M}'])/u;
const NONE = -1;

/**
 * Safe split positions, in order, each at least `targetChars` after the previous one (or the
 * start) and before the end. Between two of them it yields `null` after every window of
 * `targetChars` characters searched in vain: a point where the caller may pause.
 */
export function* safeSplits(text: string, targetChars: number): Generator<number | null, void, undefined> {
  // The next line-start split at or after the last search position (NONE: none up to the end).
  // Search positions only grow, so it stays valid until passed, and indexOf never rescans.
  let lineStart = 0;
  let from = targetChars;
  while (from < text.length) {
    if (lineStart !== NONE && lineStart < from) lineStart = nextLineStart(text, from);
    const windowEnd = Math.min(text.length, from + targetChars);
    // Line starts are preferred; letter boundaries serve text without line breaks nearby, such
    // as minified code or a base64 blob.
    let split = lineStart !== NONE && lineStart <= windowEnd ? lineStart : NONE;
    if (split === NONE) {
      split = letterEndWithin(text, from, windowEnd);
      if (split !== NONE && isInLongStretch(text, split)) {
        // Inside a stretch the counter estimates whole: search again after it, whose end is
        // looked for a window at a time (a 10 MB stretch must not be scanned in one go).
        let at = split;
        for (;;) {
          const end = Math.min(text.length, at + targetChars);
          const space = text.slice(at, end).search(SPACE);
          if (space !== -1 || end === text.length) {
            from = space === -1 ? end : at + space;
            break;
          }
          yield null;
          at = end;
        }
        yield null;
        continue;
      }
    }
    if (split === NONE) {
      yield null;
      from = windowEnd;
    } else {
      yield split;
      from = split + targetChars;
    }
  }
}

/** The first split after a line break at or after `from` (before the end), or NONE. */
function nextLineStart(text: string, from: number): number {
  let lineBreak = text.indexOf("\n", from - 1);
  while (lineBreak >= 0 && lineBreak + 1 < text.length) {
    const split = lineBreak + 1;
    if (!CONTINUES_AFTER_LINE_BREAK.test(text[split]!)) return split;
    lineBreak = text.indexOf("\n", split);
  }
  return NONE;
}

const SPACE = /\s/;

/**
 * Whether `split` lies strictly inside a whitespace-free stretch of LONG_STRETCH_MIN_CHARS or
 * more. (Line-start splits are never inside one: a line break is whitespace.) Looks at no more
 * than LONG_STRETCH_MIN_CHARS characters on either side.
 */
function isInLongStretch(text: string, split: number): boolean {
  if (split >= text.length || SPACE.test(text[split]!)) return false;
  let start = split;
  while (start > 0 && split - start < LONG_STRETCH_MIN_CHARS && !SPACE.test(text[start - 1]!)) start--;
  let end = split;
  while (end < text.length && end - start < LONG_STRETCH_MIN_CHARS && !SPACE.test(text[end]!)) end++;
  return end - start >= LONG_STRETCH_MIN_CHARS;
}

/** The first split after a letter in [from, end), or NONE; looks at no character from `end` on. */
function letterEndWithin(text: string, from: number, end: number): number {
  const window = text.slice(from - 1, end);
  const letter = LETTER_THEN_OTHER.exec(window);
  return letter ? from - 1 + letter.index + letter[0].length : NONE;
}
