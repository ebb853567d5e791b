/**
 * `JSON.stringify` in pieces: the same text, as a list of strings none of which is large.
 *
 * Why: for a large value V8's `JSON.stringify` returns a rope, and writing it to a stream or
 * measuring its UTF-8 length flattens the rope into one string. A string larger than V8's regular
 * heap objects lives in its large-object space, which maps fresh memory for every such string; on a virtual machine
 * where a page fault is expensive that costs more than serializing the value.
 * A `context/build` reply of a full context window is that size on every call. Built from small
 * pieces, the text never exists as one string on the writing side.
 *
 * Small values take the fast path (one `JSON.stringify`): splitting only pays off for big ones.
 */

/** Values whose text may be one piece; larger ones are split where they can be. */
export const PIECE_CHARS = 16 * 1024;

/** Concatenated, the pieces are exactly `JSON.stringify(value)` (`value` must not be undefined). */
export function jsonPieces(value: unknown): string[] {
  if (!largerThan(value, PIECE_CHARS)) return [JSON.stringify(value)];
  const pieces: string[] = [];
  appendValue(pieces, value, 0);
  return pieces;
}

/** Levels split at most; below them a value is one piece whatever its size (replies are shallow). */
const MAX_SPLIT_DEPTH = 8;

function appendValue(pieces: string[], value: unknown, depth: number): void {
  if (typeof value === "string") {
    if (value.length > PIECE_CHARS) appendLongString(pieces, value);
    else pieces.push(JSON.stringify(value));
    return;
  }
  if (value === null || typeof value !== "object" || depth >= MAX_SPLIT_DEPTH || !largerThan(value, PIECE_CHARS)) {
    pieces.push(JSON.stringify(value));
    return;
  }
  if (Array.isArray(value)) {
    pieces.push("[");
    for (let index = 0; index < value.length; index++) {
      if (index > 0) pieces.push(",");
      const item: unknown = value[index];
      // As JSON.stringify: what has no JSON form is null inside an array.
      if (omitted(item)) pieces.push("null");
      else appendValue(pieces, item, depth + 1);
    }
    pieces.push("]");
    return;
  }
  if (!isPlainObject(value)) {
    // toJSON, boxed primitives, class instances: JSON.stringify knows best.
    pieces.push(JSON.stringify(value));
    return;
  }
  pieces.push("{");
  let first = true;
  for (const key of Object.keys(value)) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (omitted(item)) continue;
    pieces.push(`${first ? "" : ","}${JSON.stringify(key)}:`);
    first = false;
    appendValue(pieces, item, depth + 1);
  }
  pieces.push("}");
}

/** A long string in quoted slices, never cutting a surrogate pair (a lone half would be escaped). */
function appendLongString(pieces: string[], text: string): void {
  pieces.push('"');
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + PIECE_CHARS, text.length);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    const quoted = JSON.stringify(text.slice(start, end));
    pieces.push(quoted.slice(1, -1));
    start = end;
  }
  pieces.push('"');
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Members JSON.stringify leaves out of objects (and turns into null in arrays). */
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

function isPlainObject(value: object): boolean {
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Whether the JSON text of `value` is longer than `limit` characters, give or take: string
 * lengths plus a little per member, stopping as soon as the limit is passed. Cheap for small
 * values, and for big ones it stops early.
 */
function largerThan(value: unknown, limit: number): boolean {
  let budget = limit;
  const visit = (item: unknown, depth: number): boolean => {
    if (typeof item === "string") budget -= item.length + 2;
    else if (item === null || typeof item !== "object") budget -= 8;
    // Deep nesting (or a cycle, which JSON.stringify then reports): count it as large.
    else if (depth > MAX_SPLIT_DEPTH) return true;
    else if (Array.isArray(item)) {
      budget -= 2;
      for (let index = 0; index < item.length && budget >= 0; index++) if (visit(item[index], depth + 1)) return true;
    } else {
      budget -= 2;
      for (const key in item) {
        if (!Object.prototype.hasOwnProperty.call(item, key)) continue;
        budget -= key.length + 4;
        if (visit((item as Record<string, unknown>)[key], depth + 1)) return true;
        if (budget < 0) break;
      }
    }
    return budget < 0;
  };
  return visit(value, 0);
}
