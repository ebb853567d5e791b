/**
 * The settings a daemon runs with (docs/design.md#settings): the global file
 * (`$BASE_CONTEXT_HOME/settings.json`, default `~/.base-context/settings.json`) and, per project,
 * `<project>/.base-context/settings.json`, merged over the defaults. `get` is cached and cheap;
 * the files are watched and every real change is announced through `onDidChange`.
 */
import { join, resolve } from "node:path";
import type { Settings, SettingsError, SettingsSource } from "@base-context/protocol";
import { log } from "../log.js";
import { globalSettingsPath, projectConfigDir, SETTINGS_FILE_NAME } from "../paths.js";
import { readSettingsFile, type FileSource, type LoadedSettingsFile } from "./file.js";
import { mergeSettings, type SettingsLayer } from "./merge.js";
import { watchSettingsFile, type FileWatch } from "./watch.js";

export { SETTINGS_FILE_NAME };

/**
 * The `settings/get` result. Shared and cached, so it is deeply frozen: copy before changing.
 * (Plain array and object types, so it can be returned as the protocol's result as is.)
 */
export interface SettingsSnapshot {
  readonly settings: Settings;
  /** `section.key` → `"default" | "global" | "project"`. */
  readonly sources: Record<string, SettingsSource>;
  /** Problems with the files that were read; each such file was ignored whole. */
  readonly errors: SettingsError[];
}

/**
 * The settings seen from `projectDir` (undefined: the global settings alone, which also means
 * every project's settings) may have changed. Shaped like the `settings/didChange` params.
 */
export interface SettingsChangeEvent {
  readonly projectDir?: string;
  readonly errors: SettingsError[];
}

export interface SettingsManagerOptions {
  /** Where `BASE_CONTEXT_HOME` is read from. Default: `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Watch the files for changes (default true; one-shot CLI commands may turn it off). */
  readonly watch?: boolean;
  /** Quiet time before a burst of file events is read (editors write more than once). */
  readonly debounceMs?: number;
  readonly usePolling?: boolean;
  /**
   * The watches start once this resolves (and never on the path of the first read): `serve`
   * passes its first quiet moment, so that its first requests do not wait for them. Whatever is
   * written before a watch is ready is read then.
   */
  readonly watchFrom?: Promise<void>;
}

export interface Disposable {
  dispose(): void;
}

interface WatchedFile {
  loaded: LoadedSettingsFile;
  watch?: FileWatch;
  /** Resolves once the watch has started and is listening (or will never start: disposed). */
  watching?: Promise<void>;
  timers: NodeJS.Timeout[];
}

/** How long after the last event the file is read a second time (see `schedule`). */
const SETTLE_MS = 150;

export class SettingsManager {
  readonly globalPath: string;
  private readonly files = new Map<string, WatchedFile>();
  private readonly snapshots = new Map<string, SettingsSnapshot>();
  private readonly projects = new Set<string>();
  private readonly listeners = new Set<(event: SettingsChangeEvent) => void>();
  private readonly watching: boolean;
  private readonly debounceMs: number;
  private disposed = false;

  constructor(private readonly options: SettingsManagerOptions = {}) {
    this.globalPath = globalSettingsPath(options.env ?? process.env);
    this.watching = options.watch ?? true;
    this.debounceMs = options.debounceMs ?? 50;
  }

  static projectPath(projectDir: string): string {
    return join(projectConfigDir(resolve(projectDir)), SETTINGS_FILE_NAME);
  }

  /** The effective settings for a project (or the global ones). Cached until a file changes. */
  get(projectDir?: string): SettingsSnapshot {
    const key = projectDir === undefined ? "" : resolve(projectDir);
    const cached = this.snapshots.get(key);
    if (cached) return cached;

    const global = this.file(this.globalPath, "global");
    const layers: SettingsLayer[] = [{ source: "global", values: global.values }];
    const errors = [...global.errors];
    const projectPath = key === "" ? undefined : SettingsManager.projectPath(key);
    // A project whose folder is the global home's parent would read the global file twice.
    if (projectPath !== undefined && projectPath !== this.globalPath) {
      this.projects.add(key);
      const project = this.file(projectPath, "project");
      layers.push({ source: "project", values: project.values });
      errors.push(...project.errors);
    }
    const snapshot: SettingsSnapshot = deepFreeze({ ...mergeSettings(layers), errors });
    this.snapshots.set(key, snapshot);
    return snapshot;
  }

  /** Called after a file changed in a way that changes its content (or existence). */
  onDidChange(listener: (event: SettingsChangeEvent) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Resolves once every file read so far is being watched (tests wait for this before writing). */
  async whenWatching(): Promise<void> {
    await Promise.all([...this.files.values()].map((f) => f.watching));
  }

  /** Re-reads every known file now, as a file event would (for callers that do not watch). */
  reload(): void {
    for (const path of this.files.keys()) this.refresh(path);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.listeners.clear();
    const closing: Promise<void>[] = [];
    for (const file of this.files.values()) {
      for (const timer of file.timers) clearTimeout(timer);
      if (file.watch) closing.push(file.watch.close());
    }
    this.files.clear();
    this.snapshots.clear();
    await Promise.all(closing);
  }

  // ---- files -----------------------------------------------------------------------------------

  private file(path: string, source: FileSource): LoadedSettingsFile {
    const known = this.files.get(path);
    if (known) return known.loaded;
    const entry: WatchedFile = { loaded: readSettingsFile(path, source), timers: [] };
    this.files.set(path, entry);
    reportErrors(entry.loaded);
    if (this.watching && !this.disposed) entry.watching = this.watchSoon(path, entry);
    return entry.loaded;
  }

  /**
   * Starts watching `path` once the code running now is done (and `watchFrom` has resolved), not
   * on its path: the first read happens as the daemon starts, with its first requests waiting,
   * and a process's first `fs.watch` costs milliseconds of CPU
   * (docs/architecture.md#start-path-and-bundles). Anything written between the read and the
   * watcher being ready is read then, as if it had come then.
   */
  private watchSoon(path: string, entry: WatchedFile): Promise<void> {
    const soon = new Promise<void>((resolve) => setImmediate(resolve));
    return Promise.all([soon, this.options.watchFrom]).then(() => {
      if (this.disposed || this.files.get(path) !== entry) return;
      entry.watch = watchSettingsFile(path, () => this.schedule(path), { usePolling: this.options.usePolling ?? false });
      return entry.watch.ready.then(() => this.schedule(path));
    });
  }

  /**
   * Reads the file once events stop for `debounceMs`, and once more a little later: chokidar drops
   * a `change` that follows another within 50 ms (its throttle has no trailing call), so a second
   * quick save (a formatter on save) would otherwise be lost. Reading an unchanged file is cheap
   * and announces nothing.
   */
  private schedule(path: string): void {
    const entry = this.files.get(path);
    if (!entry || this.disposed) return;
    for (const timer of entry.timers) clearTimeout(timer);
    entry.timers = [this.debounceMs, this.debounceMs + SETTLE_MS].map((delay) => {
      const timer = setTimeout(() => this.refresh(path), delay);
      timer.unref();
      return timer;
    });
  }

  private refresh(path: string): void {
    const entry = this.files.get(path);
    if (!entry || this.disposed) return;
    const loaded = readSettingsFile(path, entry.loaded.source);
    // Touches, chmods, saves of identical content and whitespace-only edits are not changes.
    if (loaded.text === entry.loaded.text) return;
    const same = meaning(loaded) === meaning(entry.loaded);
    entry.loaded = loaded;
    if (same) return;
    reportErrors(loaded);
    log("info", `settings: ${loaded.text === undefined ? "removed" : "reloaded"} ${path}`);
    this.announce(path);
  }

  private announce(path: string): void {
    const affected: Array<string | undefined> = [];
    if (path === this.globalPath) {
      this.snapshots.clear();
      affected.push(undefined, ...this.projects);
    } else {
      for (const project of this.projects) {
        if (SettingsManager.projectPath(project) === path) {
          this.snapshots.delete(project);
          affected.push(project);
        }
      }
    }
    for (const projectDir of affected) {
      const event: SettingsChangeEvent = { ...(projectDir !== undefined ? { projectDir } : {}), errors: this.get(projectDir).errors };
      for (const listener of [...this.listeners]) {
        try {
          listener(event);
        } catch (error) {
          log("error", `settings change listener failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** What a file contributes: its values when valid, its errors when not, nothing when missing. */
function meaning(file: LoadedSettingsFile): string {
  return JSON.stringify([file.text === undefined, file.values ?? null, file.errors]);
}

function reportErrors(file: LoadedSettingsFile): void {
  for (const error of file.errors) log("warn", `settings: ${file.path} is ignored: ${error.message}`);
}
