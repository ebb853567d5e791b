/**
 * `text[]` statement values in PostgreSQL's binary format (what `array_recv` reads). `pg` sends a
 * Buffer value as binary, so the strings of a batch go out as their UTF-8 bytes behind a length
 * each: the driver's array literal instead quotes every element and escapes its quotes and
 * backslashes (an entry's JSON is full of them), which made new strings of every batch's values
 * and cost the worker more than writing them to the server, and the server more to read them.
 */

/** The OID of `text` (a built-in type: the same on every server); array_recv checks it. */
const TEXT_OID = 25;

/**
 * `values` as a one-dimensional `text[]` (null and undefined are NULL): the statement casts the
 * parameter to `TEXT[]`. The buffer is its own (not a slice of Node's pool), so posting it to
 * the worker copies only its bytes.
 */
export function textArrayValue(values: readonly (string | null | undefined)[]): Buffer {
  // An empty array has no dimensions (as PostgreSQL writes one), so no size and lower bound either.
  const dimensions = values.length > 0 ? 1 : 0;
  let size = 12 + 8 * dimensions;
  let hasNull = 0;
  for (const value of values) {
    if (value == null) hasNull = 1;
    else size += Buffer.byteLength(value, "utf8");
    size += 4;
  }
  const buffer = Buffer.allocUnsafeSlow(size);
  let offset = buffer.writeInt32BE(dimensions, 0);
  offset = buffer.writeInt32BE(hasNull, offset);
  offset = buffer.writeInt32BE(TEXT_OID, offset);
  if (dimensions > 0) {
    offset = buffer.writeInt32BE(values.length, offset);
    offset = buffer.writeInt32BE(1, offset); // lower bound
  }
  for (const value of values) {
    if (value == null) {
      offset = buffer.writeInt32BE(-1, offset);
      continue;
    }
    const written = buffer.write(value, offset + 4, "utf8");
    buffer.writeInt32BE(written, offset);
    offset += 4 + written;
  }
  return buffer;
}
