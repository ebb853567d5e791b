/**
 * Watching one settings file, robust to the ways files really change:
 * - the file (or its `.base-context` folder) does not exist yet and is created later;
 * - editors' atomic saves (write a temp file, rename it over the original), which replace the
 *   inode a plain file watcher is attached to;
 * - the folder being deleted and created again.
 * So we never watch the file itself: we watch the deepest existing folder on the way to it, and
 * that folder's parent (to see the folder go away), and react only to events that name the next
 * step of the path. Nothing else in those folders is read or stat-ed.
 *
 * That matters: the global settings live in the folder that also holds the database, whose WAL
 * is written on every append, and its parent is usually the home folder. A watcher that re-read
 * a folder on each of its events (as chokidar does) would list and stat both of them for every
 * append. Here an unrelated event costs one string comparison.
 *
 * Polling (network drives; `usePolling` or CHOKIDAR_USEPOLLING, as before) stats the file's path
 * at an interval, which covers creation, atomic saves and deletion alike.
 */
import { statSync, unwatchFile, watch, watchFile, type FSWatcher, type Stats } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { log } from "../log.js";

export interface FileWatch {
  /** Resolves once the watcher is listening (events before that may be missed). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export interface WatchOptions {
  /** Polling instead of native events (network drives; CHOKIDAR_USEPOLLING also works). */
  readonly usePolling?: boolean;
}

const POLL_INTERVAL_MS = 50;

/** Calls `onChange` whenever `file`, or a folder on the way to it, is added, changed or removed. */
export function watchSettingsFile(file: string, onChange: () => void, options: WatchOptions = {}): FileWatch {
  const target = resolve(file);
  return pollingRequested(options) ? pollFile(target, onChange) : new PathWatch(target, onChange);
}

/** Native events on the deepest existing folder of the path and on its parent. */
class PathWatch implements FileWatch {
  readonly ready = Promise.resolve();
  private watchers: FSWatcher[] = [];
  /** The folder being watched for the next step of the path. */
  private anchor: string | undefined;
  private closed = false;

  constructor(
    private readonly target: string,
    private readonly onChange: () => void,
  ) {
    this.reanchor(true);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closeWatchers();
  }

  /**
   * Watches the deepest existing folder on the path (for the next step: a folder being created,
   * or the file itself) and its parent (for that folder going away). Called again whenever a
   * step of the path appears or disappears.
   */
  private reanchor(force: boolean): void {
    if (this.closed) return;
    const anchor = deepestExistingFolder(this.target);
    if (!force && anchor === this.anchor && this.watchers.length > 0) return;
    this.closeWatchers();
    this.anchor = anchor;
    this.watchFolder(anchor, nextStep(this.target, anchor), false);
    const parent = dirname(anchor);
    // Events naming the anchor itself (removed, renamed, replaced) re-create both watches: a
    // folder deleted and created again is a new folder, and the old watch sees nothing in it.
    if (parent !== anchor) this.watchFolder(parent, basename(anchor), true);
  }

  private watchFolder(folder: string, name: string, isAnchor: boolean): void {
    let watcher: FSWatcher;
    try {
      watcher = watch(folder, { persistent: false }, (_event, filename) => this.onEvent(filename, name, isAnchor));
    } catch (error) {
      // Gone meanwhile (the next event on the parent re-anchors), or out of watches: settings
      // changes are then picked up at the next start.
      log("debug", `settings watcher for ${this.target}: cannot watch ${folder}: ${(error as Error).message}`);
      return;
    }
    watcher.on("error", (error) => {
      log("debug", `settings watcher for ${this.target}: ${error.message}`);
      // A watched folder that was removed: watch what exists now.
      setImmediate(() => this.reanchorAndAnnounce(true));
    });
    this.watchers.push(watcher);
  }

  private onEvent(filename: string | Buffer | null, name: string, isAnchor: boolean): void {
    // Some platforms do not say which entry changed: assume it may be ours.
    if (filename !== null && filename.toString() !== name) return;
    this.reanchorAndAnnounce(isAnchor);
  }

  private reanchorAndAnnounce(force: boolean): void {
    if (this.closed) return;
    this.reanchor(force);
    // Also after a re-anchor: the steps below the new anchor (folder, then file) may have been
    // created before the new watch was in place; the caller's read catches up with them.
    this.onChange();
  }

  private closeWatchers(): void {
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
  }
}

function pollFile(target: string, onChange: () => void): FileWatch {
  const listener = (current: Stats, previous: Stats) => {
    if (
      current.mtimeMs !== previous.mtimeMs ||
      current.ino !== previous.ino ||
      current.size !== previous.size ||
      current.nlink !== previous.nlink
    ) {
      onChange();
    }
  };
  watchFile(target, { persistent: false, interval: POLL_INTERVAL_MS }, listener);
  return {
    ready: Promise.resolve(),
    close: async () => unwatchFile(target, listener),
  };
}

/** The folder of `file` if it exists, else its nearest existing ancestor. */
function deepestExistingFolder(file: string): string {
  let dir = dirname(file);
  while (!isFolder(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The name, inside `folder` (an ancestor of `file`), of the next step towards `file`. */
function nextStep(file: string, folder: string): string {
  let step = file;
  while (dirname(step) !== folder && dirname(step) !== step) step = dirname(step);
  return basename(step);
}

/** `usePolling`, or CHOKIDAR_USEPOLLING read the way chokidar reads it (kept for compatibility). */
function pollingRequested(options: WatchOptions): boolean {
  const env = process.env.CHOKIDAR_USEPOLLING;
  if (env !== undefined) {
    const value = env.toLowerCase();
    return value !== "false" && value !== "0";
  }
  return options.usePolling ?? false;
}
