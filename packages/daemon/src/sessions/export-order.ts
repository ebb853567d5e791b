/**
 * The order entries are written in on export. A pi file has no leaf pointer: pi takes its last
 * line as the current position. Entries are written in insertion order when the leaf is the
 * last entry already (the usual case: exporting twice gives the same bytes). After a navigation
 * it is not: then the entries are written depth-first, parents before children, each branch
 * point's child on the way to the leaf last, which ends the file with the leaf. A leaf with
 * entries under it (the session moved back to an earlier entry) cannot come last without
 * writing a child before its parent: the file keeps insertion order and the export says so.
 */
export interface EntryLink {
  seq: number;
  id: string;
  parentId: string | null;
}

export interface ExportOrder {
  /** seqs in the order to write; undefined = insertion order. */
  order?: number[];
  /** Why the file's last line will not be the session's current position. */
  warning?: string;
}

export function exportOrder(links: readonly EntryLink[], leafId: string | null): ExportOrder {
  const last = links[links.length - 1];
  if (!last) return {};
  if (leafId === null) {
    return {
      warning: `the session is positioned before its first entry, which a pi file cannot record: pi will open it at the last entry, ${last.id}`,
    };
  }
  if (last.id === leafId) return {};

  const byId = new Map(links.map((link) => [link.id, link] as const));
  const children = new Map<string, EntryLink[]>();
  const roots: EntryLink[] = [];
  for (const link of links) {
    if (link.parentId === null || !byId.has(link.parentId)) roots.push(link);
    else {
      const siblings = children.get(link.parentId);
      if (siblings) siblings.push(link);
      else children.set(link.parentId, [link]);
    }
  }
  if ((children.get(leafId)?.length ?? 0) > 0) {
    return {
      warning: `the current position ${leafId} has later entries under it, so it cannot be the file's last line: pi will open the file at ${last.id} instead`,
    };
  }

  const onPath = new Set<string>();
  for (let id: string | null = leafId; id !== null && byId.has(id) && !onPath.has(id); id = byId.get(id)!.parentId) onPath.add(id);
  const pathLast = (kids: readonly EntryLink[]) => [
    ...kids.filter((kid) => !onPath.has(kid.id)),
    ...kids.filter((kid) => onPath.has(kid.id)),
  ];

  const order: number[] = [];
  const stack = pathLast(roots).reverse();
  while (stack.length > 0) {
    const link = stack.pop()!;
    order.push(link.seq);
    stack.push(...pathLast(children.get(link.id) ?? []).reverse());
  }
  return { order };
}
