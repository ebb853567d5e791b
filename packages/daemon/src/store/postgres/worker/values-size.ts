/**
 * About how many characters statement values take on the wire: strings by length, arrays by
 * their elements, binary values (binary-arrays.ts) by their bytes.
 */
export function valuesSize(values: readonly unknown[]): number {
  let size = 0;
  for (const value of values) {
    if (typeof value === "string") size += value.length;
    else if (Array.isArray(value)) size += valuesSize(value) + 2;
    else if (ArrayBuffer.isView(value)) size += value.byteLength;
    else size += 8;
  }
  return size;
}
