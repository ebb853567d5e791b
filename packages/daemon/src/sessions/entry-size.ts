/**
 * An entry's size as the store keeps it (its JSON text, in UTF-8 bytes), measured by walking the
 * value instead of serializing it: an over-size entry is refused without making a copy of it.
 * Exact for what JSON.stringify writes except escapes (a quote or a control character counts as
 * one byte, not two or six), which is close enough for a limit.
 */

/** The JSON size of `value` in bytes, or a number over `limit` as soon as it is known to be over. */
export function jsonBytes(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const item = stack.pop();
    if (typeof item === "string") total += Buffer.byteLength(item, "utf8") + 2;
    else if (typeof item === "number" || typeof item === "boolean") total += String(item).length;
    else if (item === null) total += 4;
    else if (Array.isArray(item)) {
      total += 2 + Math.max(0, item.length - 1);
      for (const child of item) stack.push(child === undefined ? null : child);
    } else if (typeof item === "object") {
      total += 2;
      for (const key in item) {
        const child: unknown = (item as Record<string, unknown>)[key];
        if (child === undefined || typeof child === "function") continue;
        total += Buffer.byteLength(key, "utf8") + 4; // "key": and a comma
        stack.push(child);
      }
    }
  }
  return total;
}
