/**
 * What a plugin folder's files look like now, as one string: a reload caused by file events
 * is skipped when nothing changed since the last load. File events come in bursts (a new folder's
 * files appear one by one, an editor's save touches a file several times) and a spurious reload
 * would start one more version of unchanged code.
 */
import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isEditorTempFile } from "./watcher.js";

/** Not plugin code, as the watcher sees it (dependencies are not watched either). */
const SKIPPED = new Set(["node_modules", ".git"]);

export async function folderFingerprint(dir: string): Promise<string> {
  const parts: string[] = [];
  const visit = async (relative: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(join(dir, relative), { withFileTypes: true });
    } catch {
      parts.push(`${relative}:unreadable`);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (SKIPPED.has(entry.name) || isEditorTempFile(entry.name)) continue;
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        await visit(path);
        continue;
      }
      try {
        // Inode, size and nanosecond times: an atomic save always makes a new inode.
        const info = await stat(join(dir, path), { bigint: true });
        parts.push(`${path}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`);
      } catch {
        parts.push(`${path}:gone`);
      }
    }
  };
  await visit("");
  return parts.join("\n");
}
