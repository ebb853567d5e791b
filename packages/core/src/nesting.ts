/**
 * How deeply a request's params nest, checked before they are validated: schema validation,
 * `JSON.stringify` when storing and every later walk of the value recurse once per level, so
 * data nested thousands of levels deep (which `JSON.parse` reads fine) would end in "Maximum
 * call stack size exceeded" somewhere in the daemon. It is refused up front as invalid params.
 */

/** Deeper than any real entry, tool call or settings object; shallow enough for every recursive walk. */
export const MAX_PARAMS_DEPTH = 128;

/**
 * The path (as `a.b.0.c`) of the first value nested deeper than `maxDepth` levels of objects and
 * arrays, or undefined when none is. Iterative, so its own depth is no problem.
 */
export function tooDeepAt(value: unknown, maxDepth: number = MAX_PARAMS_DEPTH): string | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: "" }];
  while (stack.length > 0) {
    const { value: item, depth, path } = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (depth >= maxDepth) return path;
    if (Array.isArray(item)) {
      for (let index = 0; index < item.length; index++) {
        const child: unknown = item[index];
        if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1, path: join(path, String(index)) });
      }
    } else {
      for (const key in item) {
        const child: unknown = (item as Record<string, unknown>)[key];
        if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1, path: join(path, key) });
      }
    }
  }
  return undefined;
}

function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}
