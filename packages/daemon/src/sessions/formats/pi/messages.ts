/**
 * The context messages of a pi session file's current branch (the path to its last entry), read
 * without a store: for the retention corpus (bench and tests), where whole files are summarized.
 * Lines are migrated from any format version the same way an import migrates them.
 */
import type { ContextMessage, SessionEntry } from "@base-context/protocol";
import { entryToContextMessage } from "@base-context/core";
import { PiLineParser } from "./parser.js";

export function piSessionMessages(text: string): ContextMessage[] {
  let next = 0;
  const parser = new PiLineParser({ entryId: () => `m${(next++).toString(16).padStart(7, "0")}` });
  const byId = new Map<string, SessionEntry>();
  let last: SessionEntry | undefined;
  text.split("\n").forEach((line, i) => {
    const parsed = parser.parse(line, i + 1);
    if (parsed.kind !== "entry") return;
    byId.set(parsed.entry.id, parsed.entry);
    last = parsed.entry;
  });
  const path: SessionEntry[] = [];
  for (let entry = last; entry; entry = entry.parentId === null ? undefined : byId.get(entry.parentId)) path.unshift(entry);
  return path.map(entryToContextMessage).filter((message): message is ContextMessage => message !== undefined);
}
