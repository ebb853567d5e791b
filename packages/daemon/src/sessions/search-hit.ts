/**
 * A search hit as the protocol sends it: the entry's kind and the words around the first place
 * the query matched, on one line. The index is contentless (store/sqlite/search.ts), so the snippet is
 * cut from the entry's own text here.
 */
import type { SearchHit, SessionEntry } from "@base-context/protocol";
import type { z } from "zod";
import { searchText } from "../store/index.js";

/** Characters of context on each side of the match. */
const SNIPPET_SIDE = 60;

export function searchHit(entryId: string, entry: SessionEntry, query: string): z.infer<typeof SearchHit> {
  const hit: z.infer<typeof SearchHit> = { entryId, type: entry.type, snippet: snippet(searchText(entry) ?? "", query) };
  if (entry.type === "message") hit.role = entry.message.role;
  return hit;
}

export function snippet(text: string, query: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const lower = flat.toLowerCase();
  const words = query.toLowerCase().split(/\s+/).filter((word) => word.length > 0);
  // Stems match too ("themes" for "theme", "running" for "run"), so look for ever shorter starts.
  let at = -1;
  for (const word of words) {
    for (let length = word.length; length >= Math.min(word.length, 3) && at < 0; length--) at = lower.indexOf(word.slice(0, length));
    if (at >= 0) break;
  }
  if (at < 0) at = 0;
  const start = Math.max(0, at - SNIPPET_SIDE);
  const end = Math.min(flat.length, at + SNIPPET_SIDE * 2);
  return `${start > 0 ? "…" : ""}${flat.slice(start, end)}${end < flat.length ? "…" : ""}`;
}
