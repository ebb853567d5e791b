/**
 * Watches a plugins root for saved changes (chokidar: editors' atomic saves — write a temp file,
 * rename it over the original — arrive as a change of the original). The watch starts at an
 * `anchor` folder that exists (the project folder for project plugins), so a plugins folder
 * created later is still seen; everything off the way to the root is ignored, so a project's
 * own files cost nothing.
 */
import type { FSWatcher } from "chokidar";
import { basename, sep } from "node:path";
import { log } from "../log.js";
import { pluginNameOf } from "./discovery.js";

export interface RootWatch {
  close(): Promise<void>;
}

/** Never plugin code: dependencies, VCS data, editors' swap and backup files. */
const IGNORED_SEGMENTS = new Set(["node_modules", ".git"]);
/**
 * Files editors and atomic writers create next to the one being saved, and remove or rename a
 * moment later: a change to one of them is not a change to the plugin (it would reload it for
 * nothing, or load a half-written file). Emacs `.#x` / `#x#`, backups `x~`, vim `.x.swp` (`.swx` when probing) and its
 * `4913` probe, `x.tmp` / `x.tmp.123` (and `.x.tmp`), JetBrains `x___jb_tmp___` / `x___jb_old___`.
 */
const EDITOR_TEMP_FILE = /^\.#|^#.*#$|~$|\.sw[a-px]$|^4913$|\.tmp(?:\.\d+)?$|___jb_(?:tmp|old)___$/;

/** How long a changed file must stay unchanged before it is reported, and how often that is checked. */
const STABLE_MS = 40;
const STABLE_POLL_MS = 10;

export function isEditorTempFile(name: string): boolean {
  return EDITOR_TEMP_FILE.test(name);
}

function isWithin(parent: string, path: string): boolean {
  return path === parent || path.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/**
 * @param onChange called with the plugin folder name a change belongs to, or null when the
 *   root itself appeared, vanished or changed (rescan everything).
 */
let chokidar: Promise<typeof import("chokidar")> | undefined;

async function loadChokidar(): Promise<typeof import("chokidar")> {
  const started = performance.now();
  const loaded = await import("chokidar");
  log("debug", `plugins: loaded chokidar to watch plugin folders (${(performance.now() - started).toFixed(0)} ms)`);
  return loaded;
}

export async function watchPluginRoot(root: string, anchor: string, onChange: (name: string | null) => void): Promise<RootWatch> {
  const ignored = (path: string): boolean => {
    if (!isWithin(root, path)) return !isWithin(path, root); // above the root: keep only its ancestors
    const relative = path.slice(root.length);
    if (relative.split(sep).some((segment) => IGNORED_SEGMENTS.has(segment))) return true;
    return isEditorTempFile(basename(path));
  };
  // Loaded when the first root is watched (in the background after `initialize`), not at start-up.
  const { watch } = await (chokidar ??= loadChokidar());
  // awaitWriteFinish: chokidar drops a "change" of a path reported less than 50 ms earlier, so a
  // second save right after a first one (a fix saved just after a broken version was reported)
  // would never reload. Changes waiting for the file to settle are not throttled but coalesced:
  // one event once the file has stopped changing for STABLE_MS, after the last save.
  const watcher: FSWatcher = watch(anchor, {
    ignoreInitial: true,
    ignored,
    awaitWriteFinish: { stabilityThreshold: STABLE_MS, pollInterval: STABLE_POLL_MS },
  });
  watcher.on("all", (_event, path) => {
    if (!isWithin(root, path)) return;
    onChange(pluginNameOf(root, path));
  });
  watcher.on("error", (error) => log("warn", `plugins: watching ${root} failed: ${(error as Error).message}`));
  // Changes saved before the initial scan is done would be missed.
  await new Promise<void>((resolve) => watcher.once("ready", () => resolve()));
  return { close: () => watcher.close() };
}
