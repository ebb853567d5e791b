/**
 * Watching one settings file with chokidar, robust to the ways files really change:
 * - the file (or its `.base-context` folder) does not exist yet and is created later;
 * - editors' atomic saves (write a temp file, rename it over the original), which replace the
 *   inode a plain file watcher is attached to;
 * - the folder being deleted and created again.
 * So we never watch the file itself: we watch the nearest existing ancestor above its folder,
 * and let through only the chain of paths that leads down to the file (nothing else in, say, a
 * project root is read or watched).
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import { log } from "../log.js";

export interface FileWatch {
  /** Resolves once the watcher has scanned and is listening (events before that may be missed). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export interface WatchOptions {
  /** Polling instead of native events (network drives; CHOKIDAR_USEPOLLING also works). */
  readonly usePolling?: boolean;
}

/** Calls `onChange` whenever `file`, or a folder on the way to it, is added, changed or removed. */
export function watchSettingsFile(file: string, onChange: () => void, options: WatchOptions = {}): FileWatch {
  const target = resolve(file);
  const folder = dirname(target);
  const anchor = nearestExisting(dirname(folder));

  // The allowed chain: anchor, every folder between it and the file, and the file.
  const allowed = new Set<string>([target]);
  for (let dir = folder; ; dir = dirname(dir)) {
    allowed.add(dir);
    if (dir === anchor || dirname(dir) === dir) break;
  }

  const watcher: FSWatcher = watch(anchor, {
    ignoreInitial: true,
    ignored: (path: string) => !allowed.has(resolve(path)),
    depth: allowed.size,
    // The daemon stays alive for other reasons; a watcher alone must not keep a CLI command running.
    persistent: false,
    ...(options.usePolling ? { usePolling: true, interval: 50 } : {}),
  });

  watcher.on("all", (_event, path) => {
    if (allowed.has(resolve(path))) onChange();
  });
  watcher.on("error", (error) => {
    log("debug", `settings watcher for ${target}: ${error instanceof Error ? error.message : String(error)}`);
  });
  const ready = new Promise<void>((resolveReady) => watcher.once("ready", () => resolveReady()));

  return {
    ready,
    close: () => watcher.close(),
  };
}

function nearestExisting(path: string): string {
  let dir = path;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
