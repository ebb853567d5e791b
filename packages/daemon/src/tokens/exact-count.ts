/**
 * Exact token counting, hardened for long stretches.
 *
 * Counting itself (pre-tokenize, look up, merge) is `countPlain` (compact-encoding.ts). Long
 * stretches are estimated, not counted: a stretch of at least `longStretchMinChars` characters
 * that are all whitespace or all non-whitespace (a base64 blob, a hex dump, 20 MB of `=`, minified
 * code without spaces) is slow to count per character however it is merged, so such a stretch
 * is counted exactly on evenly spaced sample windows (about 1/32 of it, at most 64 windows) and
 * the rest is extrapolated from their tokens per character. Text without such a stretch (ordinary
 * prose, code, JSON, tool output) is counted exactly; docs/guarantees.md states the error bound
 * measured on base64 and single-character runs.
 *
 * IMPORTANT: this function runs inside the counting worker from its source text, so it must not
 * reference anything outside its own body (types are erased and fine).
 */
import type { CountPlain } from "./compact-encoding.js";

export type CountExact = (text: string) => number;

export function createExactCount(countPlain: CountPlain, longStretchMinChars: number): CountExact {
  const countExactly = (text: string): number => (text.length === 0 ? 0 : countPlain(text));

  // JavaScript's \s, by code unit (a regex per character would cost more than the counting it saves).
  const isSpace = (code: number): boolean =>
    code === 32 || (code >= 9 && code <= 13) || code === 160 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
  const SAMPLE_CHARS = 128;
  const MAX_SAMPLES = 64;
  /** Tokens of a long stretch, from samples (see above): at least 1, at most its length. */
  const estimateStretch = (stretch: string): number => {
    const windows = Math.min(MAX_SAMPLES, Math.max(1, Math.floor(stretch.length / (32 * SAMPLE_CHARS))));
    const gap = windows === 1 ? 0 : (stretch.length - SAMPLE_CHARS) / (windows - 1);
    let sampledTokens = 0;
    for (let index = 0; index < windows; index++) {
      const start = Math.floor(index * gap);
      sampledTokens += countExactly(stretch.slice(start, start + SAMPLE_CHARS));
    }
    const estimate = Math.round((stretch.length * sampledTokens) / (windows * SAMPLE_CHARS));
    return Math.min(stretch.length, Math.max(1, estimate));
  };

  return (text: string): number => {
    if (text.length < longStretchMinChars) return countExactly(text);
    let total = 0;
    let exactFrom = 0;
    let stretchStart = 0;
    for (let index = 1; index <= text.length; index++) {
      if (index < text.length && isSpace(text.charCodeAt(index)) === isSpace(text.charCodeAt(stretchStart))) continue;
      if (index - stretchStart >= longStretchMinChars) {
        total += countExactly(text.slice(exactFrom, stretchStart)) + estimateStretch(text.slice(stretchStart, index));
        exactFrom = index;
      }
      stretchStart = index;
    }
    return exactFrom === 0 ? countExactly(text) : total + countExactly(text.slice(exactFrom));
  };
}
