/**
 * The order hooks run in: plugins named in `plugins.order` first (by folder name or by id), in
 * that order; then the others by name, then id (global before project for equal names). Stable,
 * so "first cancel wins, last result wins" always means the same plugin.
 */
export interface Orderable {
  readonly id: string;
  readonly name: string;
}

export function orderPlugins<T extends Orderable>(plugins: readonly T[], order: readonly string[]): T[] {
  const rank = (plugin: T): number => {
    const byId = order.indexOf(plugin.id);
    if (byId >= 0) return byId;
    const byName = order.indexOf(plugin.name);
    return byName >= 0 ? byName : order.length;
  };
  return [...plugins].sort((a, b) => rank(a) - rank(b) || compare(a.name, b.name) || compare(a.id, b.id));
}

/** Code-point order: the same on every machine, whatever its locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
