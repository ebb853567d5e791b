/**
 * The plugin host: discovers plugins in the global folder and in projects, keeps each running in
 * its own worker, reloads them when their files change, and runs hooks for the compaction and
 * tree pipelines. The server maps its methods to `plugins/list`, `plugins/reload`,
 * `project/trust` and its events to `plugins/didChange` / `plugins/didError`.
 */
import type {
  CompactHookEvent,
  HookBranchSummary,
  HookName,
  HookCompaction,
  PluginError,
  PluginInfo,
  PluginSource,
  Settings,
  TreeHookEvent,
} from "@base-context/protocol";
import { existsSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { ResourceLimits } from "node:worker_threads";
import { AppError } from "../errors.js";
import { log } from "../log.js";
import { appliesTo } from "./applies.js";
import { baseContextHome } from "../paths.js";
import { CrashBreaker } from "./crash-breaker.js";
import { globalPluginsRoot, listPluginFolders, projectPluginsRoot } from "./discovery.js";
import { ManagedPlugin, type LoadReason, type PluginRuntime } from "./managed-plugin.js";
import { orderPlugins } from "./order.js";
import type { PluginServices } from "./plugin-services.js";
import { runHook, type HookRun } from "./run-hook.js";
import { normalizeProjectDir, TrustStore } from "./trust.js";
import { watchPluginRoot, type RootWatch } from "./watcher.js";
import { DEFAULT_SETTINGS } from "../settings/defaults.js";
import { startProcess } from "./child-process.js";
import { StandbyThreads, workerChannel } from "./worker-thread.js";

export interface PluginHostOptions {
  /** The global folder (default: `baseContextHome()`); plugins live in `<home>/plugins`, trust in `<home>/trust.json`. */
  home?: string;
  /** The daemon's tokenizer and model for `ctx.countTokens` / `ctx.complete`. */
  services?: Partial<PluginServices>;
  /** Hot reload (default true). */
  watch?: boolean;
  /** Per worker (default: 256 MB old generation). */
  resourceLimits?: ResourceLimits;
  /** After a hook times out or is cancelled, how long its plugin may take to stop before its worker is terminated (default 250 ms). */
  abortGraceMs?: number;
  /** How long loading a plugin module may take (default 10 s). */
  activationTimeoutMs?: number;
  /** Backstop for a replaced version to finish its running calls (default 120 s; each call has its own timeout). */
  retireTimeoutMs?: number;
  /** Quiet time after a file event before reloading (default 20 ms; editors write several events per save). */
  reloadDebounceMs?: number;
  /** Worker deaths within `crashWindowMs` that disable a plugin (default 5 in 3 minutes). */
  crashLimit?: number;
  crashWindowMs?: number;
  now?: () => number;
  /**
   * Keep one started worker thread ready, so a hot reload or a restart only pays for importing the
   * plugin (default: on when watching). Costs one idle thread.
   */
  warmStandby?: boolean;
  /** Environment variables never passed to plugin workers (default: OPENAI_API_KEY); read at each thread start. */
  hiddenEnv?: () => readonly string[];
  /** `plugins.isolation` of the global settings, read when a plugin version starts (default "worker"). */
  isolation?: () => "worker" | "process";
  /** Address-space limit of a plugin process, in MB (default 2048); its heap limit is `resourceLimits`' old generation. */
  processAddressSpaceMb?: number;
  /** `plugins.maxMessageBytes` of the global settings (calls use their session's); read when a worker starts. */
  maxMessageBytes?: () => number;
  /** Validate hook events against their schemas before running (tests; costs time on large sessions). */
  checkEvents?: boolean;
}

export interface HookCallOptions {
  /** The merged settings for the session: `plugins.*` steer the run; the whole object is the plugins' `ctx.settings`. */
  settings: Settings;
  /** The session's project: its plugins run (once trusted) besides the global ones. */
  projectDir?: string;
  /** Aborted when the request is cancelled: plugins see their `ctx.signal` abort and the run rejects with CancelledError. */
  signal?: AbortSignal;
  /** Told when each plugin's hook call starts (its id) and ends (undefined): progress while a plugin works. */
  onPluginCall?: (pluginId: string | undefined) => void;
}

export interface CompactHookCallOptions extends HookCallOptions {
  /**
   * Ids of the entries kept after the prepared `firstKeptEntryId` that a plugin may choose as its
   * own `firstKeptEntryId` (the summarized, turn-prefix and first kept entries are always allowed).
   * Default: the entries after `firstKeptEntryId` in `event.branchEntries`.
   */
  keptEntryIds?: Iterable<string>;
}

interface PluginRoot {
  source: PluginSource;
  projectDir?: string;
  root: string;
  watch?: RootWatch;
}

const GLOBAL_ROOT_KEY = "global";

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export class PluginHost {
  private readonly home: string;
  private readonly options: PluginHostOptions;
  private readonly trust: TrustStore;
  private readonly runtime: PluginRuntime;
  /** By "global" or a normalized project folder. */
  private readonly roots = new Map<string, PluginRoot>();
  private readonly openedProjects = new Map<string, Promise<void>>();
  private readonly plugins = new Map<string, ManagedPlugin>();
  private readonly pendingSyncs = new Map<string, NodeJS.Timeout>();
  private readonly changeListeners = new Set<(plugins: PluginInfo[]) => void>();
  private readonly errorListeners = new Set<(error: PluginError) => void>();
  private readonly threads: StandbyThreads;
  private changeScheduled = false;
  /** Plugins and session folders the log said a plugin does not run for (said once each). */
  private readonly toldNotRun = new Set<string>();
  private disposed = false;

  constructor(options: PluginHostOptions = {}) {
    this.options = options;
    this.home = options.home ?? baseContextHome();
    this.trust = new TrustStore(this.home);
    const crashLimit = options.crashLimit ?? 5;
    const crashWindowMs = options.crashWindowMs ?? 180_000;
    const hiddenEnv = options.hiddenEnv ?? (() => ["OPENAI_API_KEY"]);
    const resourceLimits = options.resourceLimits ?? { maxOldGenerationSizeMb: 256 };
    const threadOptions = () => {
      const env = { ...process.env };
      for (const name of hiddenEnv()) delete env[name];
      return { env, resourceLimits };
    };
    // A warm thread is of no use to plugin processes.
    const keepStandby = (options.warmStandby ?? options.watch !== false) && options.isolation?.() !== "process";
    this.threads = new StandbyThreads(threadOptions, keepStandby);
    this.runtime = {
      services: {
        countTokens: options.services?.countTokens ?? ((text) => Math.ceil(text.length / 4)),
        complete:
          options.services?.complete ??
          (() => Promise.reject(new Error("this daemon offers no model to plugins (ctx.complete is unavailable)"))),
      },
      takeChannel: (dir, isolation) =>
        isolation === "process"
          ? startProcess({
              dir,
              heapMb: resourceLimits.maxOldGenerationSizeMb ?? 256,
              addressSpaceMb: options.processAddressSpaceMb ?? 2048,
              maxLineBytes: this.runtime.maxMessageBytes(),
            })
          : workerChannel(this.threads.take()),
      maxMessageBytes: () => options.maxMessageBytes?.() ?? DEFAULT_SETTINGS.plugins.maxMessageBytes,
      activationTimeoutMs: options.activationTimeoutMs ?? 10_000,
      abortGraceMs: options.abortGraceMs ?? 250,
      retireTimeoutMs: options.retireTimeoutMs ?? 120_000,
      crashLimitText: `${crashLimit} crashes within ${Math.round(crashWindowMs / 1000)} s`,
      newBreaker: () => new CrashBreaker(crashLimit, crashWindowMs, options.now),
      isTrusted: (projectDir) => this.trust.isTrusted(projectDir),
      isolation: () => options.isolation?.() ?? "worker",
      report: (error) => {
        for (const listener of this.errorListeners) listener(error);
      },
      changed: () => this.scheduleChange(),
    };
  }

  /** Discovers and starts the global plugins and begins watching their folder. */
  async start(): Promise<void> {
    const root = globalPluginsRoot(this.home);
    await mkdir(root, { recursive: true });
    const record: PluginRoot = { source: "global", root };
    this.roots.set(GLOBAL_ROOT_KEY, record);
    // Watch first, then scan: a plugin folder written while the host starts (a client and
    // `plugin new` racing) is then seen by one or the other, never missed by both.
    await this.watchRoot(GLOBAL_ROOT_KEY, root);
    await this.syncRoot(GLOBAL_ROOT_KEY);
  }

  /**
   * Makes a project's plugins known (listed; run only once the project is trusted) and watched.
   * Called implicitly by hook runs, `list` and `setTrust`. Returns the normalized folder.
   */
  async addProject(projectDir: string): Promise<string> {
    const key = normalizeProjectDir(projectDir);
    if (this.disposed) return key;
    let opened = this.openedProjects.get(key);
    if (opened === undefined) {
      // A project whose .base-context is the global folder (the home folder, by default) has the
      // global plugins as its "project plugins": listing (and trusting) them twice would be wrong.
      const isGlobalFolder = projectPluginsRoot(key) === globalPluginsRoot(normalizeProjectDir(this.home));
      opened = isGlobalFolder ? Promise.resolve() : this.openProject(key);
      this.openedProjects.set(key, opened);
    }
    await opened;
    return key;
  }

  private async openProject(key: string): Promise<void> {
    this.roots.set(key, { source: "project", projectDir: key, root: projectPluginsRoot(key) });
    // Watched from the project folder itself, so a plugins folder created later is seen too;
    // watched before the scan, as in `start`.
    if (isDirectory(key)) await this.watchRoot(key, key);
    await this.syncRoot(key);
  }

  private async watchRoot(rootKey: string, anchor: string): Promise<void> {
    const record = this.roots.get(rootKey);
    if (record === undefined || this.options.watch === false) return;
    const watch = await watchPluginRoot(record.root, anchor, (name) => this.scheduleSync(rootKey, name));
    if (this.disposed) await watch.close();
    else record.watch = watch;
  }

  /** Runs `session_before_compact` across the plugins; never rejects for a plugin's failure, only for a cancel. */
  async runCompactHook(event: CompactHookEvent, options: CompactHookCallOptions): Promise<HookRun<HookCompaction>> {
    const context = options.keptEntryIds === undefined ? {} : { keptEntryIds: options.keptEntryIds };
    return runHook({ hook: "session_before_compact", event, ...(await this.hookInput(options, "session_before_compact")), context });
  }

  /** Runs `session_before_tree` across the plugins; never rejects for a plugin's failure, only for a cancel. */
  async runTreeHook(event: TreeHookEvent, options: HookCallOptions): Promise<HookRun<HookBranchSummary>> {
    return runHook({ hook: "session_before_tree", event, ...(await this.hookInput(options, "session_before_tree")), context: {} });
  }

  private async hookInput(options: HookCallOptions, hook: HookName) {
    const projectDir = options.projectDir === undefined ? undefined : await this.addProject(options.projectDir);
    const candidates = [...this.plugins.values()].filter((plugin) => plugin.source === "global" || plugin.projectDir === projectDir);
    this.sayNotRun(hook, options.projectDir);
    return {
      plugins: orderPlugins(candidates, options.settings.plugins.order),
      settings: options.settings,
      checkEvent: this.options.checkEvents === true,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onPluginCall === undefined ? {} : { onPluginCall: options.onPluginCall }),
    };
  }

  /**
   * The plugins of the other projects open here that would answer `hook` but do not run for a
   * session in `sessionCwd`: said in the log, once per plugin and folder, with why.
   */
  private sayNotRun(hook: HookName, sessionCwd: string | undefined): void {
    for (const plugin of this.plugins.values()) {
      if (plugin.source !== "project" || !plugin.mayRun(hook)) continue;
      const verdict = appliesTo(plugin, sessionCwd);
      const key = `${plugin.id}\n${sessionCwd ?? ""}`;
      if (verdict.applies || this.toldNotRun.has(key)) continue;
      this.toldNotRun.add(key);
      log("info", `plugin ${plugin.id} does not run (${hook}) for this session: ${verdict.why}`);
    }
  }

  /**
   * Cheap and synchronous: false when no plugin could answer `hook` for this project, so a caller
   * can skip building the event. True for a project not opened yet (its plugins load on the run).
   */
  hasHook(hook: HookName, context: { settings: Settings; projectDir?: string }): boolean {
    if (!context.settings.plugins.enabled) return false;
    const projectDir = context.projectDir === undefined ? undefined : normalizeProjectDir(context.projectDir);
    if (projectDir !== undefined && !this.openedProjects.has(projectDir)) return true;
    return [...this.plugins.values()].some(
      (plugin) => (plugin.source === "global" || plugin.projectDir === projectDir) && plugin.mayRun(hook),
    );
  }

  /** Global plugins plus those of `projectDir` (or of every known project when it is omitted). */
  async list(projectDir?: string): Promise<PluginInfo[]> {
    const project = projectDir === undefined ? undefined : await this.addProject(projectDir);
    return [...this.plugins.values()]
      .filter((plugin) => project === undefined || plugin.source === "global" || plugin.projectDir === project)
      .map((plugin) => plugin.info())
      .sort((a, b) => (a.source === b.source ? a.name.localeCompare(b.name) || a.id.localeCompare(b.id) : a.source === "global" ? -1 : 1));
  }

  /** Reloads one plugin from its files (re-enabling it after crashes), or rescans every folder. */
  async reload(id?: string): Promise<PluginInfo[]> {
    if (id !== undefined) {
      const plugin = this.plugins.get(id);
      if (plugin === undefined) throw new AppError("plugin_not_found", `no plugin with id "${id}"`, { id });
      await plugin.reload();
    } else {
      await Promise.all([...this.roots.keys()].map((key) => this.syncRoot(key, { reloadKnown: true })));
    }
    return this.list();
  }

  isTrusted(projectDir: string): boolean {
    return this.trust.isTrusted(projectDir);
  }

  /** Trusting starts the project's plugins; withdrawing trust stops them. */
  async setTrust(projectDir: string, trusted: boolean): Promise<void> {
    await this.trust.setTrusted(projectDir, trusted);
    const key = normalizeProjectDir(projectDir);
    if (!this.roots.has(key)) {
      await this.addProject(key);
      return;
    }
    await Promise.all([...this.plugins.values()].filter((plugin) => plugin.projectDir === key).map((plugin) => plugin.reload()));
  }

  onDidChange(listener: (plugins: PluginInfo[]) => void): { dispose(): void } {
    this.changeListeners.add(listener);
    return { dispose: () => void this.changeListeners.delete(listener) };
  }

  onDidError(listener: (error: PluginError) => void): { dispose(): void } {
    this.errorListeners.add(listener);
    return { dispose: () => void this.errorListeners.delete(listener) };
  }

  /** One `didChange` per burst of changes. */
  private scheduleChange(): void {
    if (this.changeScheduled || this.disposed) return;
    this.changeScheduled = true;
    setImmediate(() => {
      this.changeScheduled = false;
      if (this.disposed || this.changeListeners.size === 0) return;
      void this.list().then((plugins) => {
        for (const listener of this.changeListeners) listener(plugins);
      });
    });
  }

  private pluginId(rootKey: string, name: string): string {
    const record = this.roots.get(rootKey)!;
    return record.source === "global" ? `global:${name}` : `project:${name}@${record.projectDir!}`;
  }

  private scheduleSync(rootKey: string, name: string | null): void {
    const key = `${rootKey}\0${name ?? ""}`;
    clearTimeout(this.pendingSyncs.get(key));
    this.pendingSyncs.set(
      key,
      setTimeout(() => {
        this.pendingSyncs.delete(key);
        void (name === null ? this.syncRoot(rootKey) : this.syncPlugin(rootKey, name, "files"));
      }, this.options.reloadDebounceMs ?? 20),
    );
  }

  /** Brings one plugin folder in line with the disk: new → load, changed → reload, gone → stop. */
  private async syncPlugin(rootKey: string, name: string, reason: LoadReason): Promise<void> {
    const record = this.roots.get(rootKey);
    if (record === undefined || this.disposed) return;
    const id = this.pluginId(rootKey, name);
    const dir = join(record.root, name);
    const known = this.plugins.get(id);
    if (!isDirectory(dir)) {
      if (known !== undefined) {
        this.plugins.delete(id);
        await known.stop();
        this.scheduleChange();
      }
      return;
    }
    if (known !== undefined) {
      await known.reload(reason);
      return;
    }
    const plugin = new ManagedPlugin(
      { id, name, source: record.source, dir, ...(record.projectDir === undefined ? {} : { projectDir: record.projectDir }) },
      this.runtime,
    );
    this.plugins.set(id, plugin);
    await plugin.reload();
  }

  private async syncRoot(rootKey: string, options: { reloadKnown?: boolean } = {}): Promise<void> {
    const record = this.roots.get(rootKey);
    if (record === undefined) return;
    const names = existsSync(record.root) ? await listPluginFolders(record.root) : [];
    const onDisk = new Set(names.map((name) => this.pluginId(rootKey, name)));
    const gone = [...this.plugins.values()].filter(
      (plugin) => plugin.source === record.source && plugin.projectDir === record.projectDir && !onDisk.has(plugin.id),
    );
    const fresh = names.filter((name) => options.reloadKnown === true || !this.plugins.has(this.pluginId(rootKey, name)));
    const reason: LoadReason = options.reloadKnown === true ? "asked" : "files";
    await Promise.all([
      ...gone.map((plugin) => this.syncPlugin(rootKey, plugin.name, reason)),
      ...fresh.map((name) => this.syncPlugin(rootKey, name, reason)),
    ]);
  }

  /** Stops watching and ends every worker. Call it on shutdown: running workers keep the process alive. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const timer of this.pendingSyncs.values()) clearTimeout(timer);
    this.pendingSyncs.clear();
    const roots = [...this.roots.values()];
    this.roots.clear();
    await Promise.all(roots.map((record) => record.watch?.close()));
    const plugins = [...this.plugins.values()];
    this.plugins.clear();
    await Promise.all([...plugins.map((plugin) => plugin.stop()), this.threads.dispose()]);
  }
}
