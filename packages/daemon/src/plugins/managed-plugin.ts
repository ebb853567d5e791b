/**
 * One plugin folder over time: which version serves calls, loading a new version when its files
 * change (the old one serves until the new one has activated, then finishes its calls and ends),
 * restarting after a crash, and the crash breaker that disables a plugin that keeps dying.
 */
import type {
  HookName,
  PluginError,
  PluginErrorKind,
  PluginInfo,
  PluginLastError,
  PluginSource,
  PluginStatus,
} from "@base-context/protocol";
import { HOOK_NAMES, SUPPORTED_PLUGIN_API_VERSIONS } from "@base-context/protocol";
import type { PluginChannel } from "./channel.js";
import { log, type LogLevel } from "../log.js";
import type { CrashBreaker } from "./crash-breaker.js";
import { readManifest, type PluginManifest } from "./discovery.js";
import { folderFingerprint } from "./fingerprint.js";
import type { PluginServices } from "./plugin-services.js";
import { PluginWorker, type WorkerDeath } from "./plugin-worker.js";

/** What every plugin shares, provided by the host. */
export interface PluginRuntime {
  services: PluginServices;
  /** A fresh worker for a new plugin version (a warm standby thread when there is one). */
  takeChannel(pluginDir: string, isolation: "worker" | "process"): PluginChannel;
  /** `plugins.maxMessageBytes` of the global settings, for messages outside any call. */
  maxMessageBytes(): number;
  activationTimeoutMs: number;
  abortGraceMs: number;
  retireTimeoutMs: number;
  crashLimitText: string;
  newBreaker(): CrashBreaker;
  isTrusted(projectDir: string): boolean;
  /** Where the next version started will run (`plugins.isolation`, or "process" when fd 1 is unguarded). */
  isolation(): "worker" | "process";
  report(error: PluginError): void;
  changed(): void;
}

export interface PluginLocation {
  id: string;
  name: string;
  source: PluginSource;
  projectDir?: string;
  dir: string;
}

/** Why a plugin loads: its files changed (skipped when they did not), or it was asked to. */
export type LoadReason = "files" | "asked";

/** Which plugin version produced something. */
export interface PluginRef {
  id: string;
  name: string;
  version: string;
  generation: number;
}

export class ManagedPlugin {
  readonly id: string;
  readonly name: string;
  readonly source: PluginSource;
  readonly projectDir: string | undefined;
  readonly dir: string;
  private readonly runtime: PluginRuntime;
  private readonly breaker: CrashBreaker;
  private serving: PluginWorker | undefined;
  /** A restart after a crash: same version, fresh thread. */
  private restarting: Promise<PluginWorker | undefined> | undefined;
  private manifest: PluginManifest | undefined;
  private generation = 0;
  private status: PluginStatus = "error";
  private loadedAt: string | undefined;
  /** Where the serving version runs (set when it starts). */
  private isolation: "worker" | "process" | undefined;
  private lastError: PluginLastError | undefined;
  private loading: Promise<void> | undefined;
  private loadAgain: LoadReason | undefined;
  /** The folder's files at the last load attempt (loaded or not). */
  private loadedFiles: string | undefined;
  private stopped = false;
  /**
   * Set when one of this plugin's worker threads did not stop when asked (blocked in native code
   * or a system call, where a thread cannot be interrupted): every later version runs in a child
   * process, which can always be killed, so one stuck thread is the most it ever leaves behind.
   */
  private threadStuck = false;

  constructor(location: PluginLocation, runtime: PluginRuntime) {
    this.id = location.id;
    this.name = location.name;
    this.source = location.source;
    this.projectDir = location.projectDir;
    this.dir = location.dir;
    this.runtime = runtime;
    this.breaker = runtime.newBreaker();
  }

  /**
   * Loads the folder's current files as a new version. Loads never overlap: a change saved while
   * one is running schedules one more, and the returned promise settles after the last.
   * `files`: called for file events, it loads only when the files differ from the last attempt;
   * `asked` (a client, trust, a first load) always loads.
   */
  reload(reason: LoadReason = "asked"): Promise<void> {
    if (this.loading !== undefined) {
      if (this.loadAgain !== "asked") this.loadAgain = reason;
      return this.loading;
    }
    this.loading = (async () => {
      let next: LoadReason | undefined = reason;
      while (next !== undefined && !this.stopped) {
        this.loadAgain = undefined;
        await this.loadOnce(next);
        next = this.loadAgain;
      }
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async loadOnce(reason: LoadReason): Promise<void> {
    if (this.stopped) return;
    if (this.source === "project" && !this.runtime.isTrusted(this.projectDir!)) {
      // Reading package.json runs none of the plugin's code: the listing shows its real version.
      const read = await readManifest(this.dir);
      if (read.ok) this.manifest = read.manifest;
      await this.unload("untrusted");
      return;
    }
    const files = await folderFingerprint(this.dir);
    if (reason === "files" && files === this.loadedFiles) return;
    this.loadedFiles = files;
    // New files (or the user asked): crashes of earlier versions no longer count.
    this.breaker.reset();
    const generation = ++this.generation;
    const read = await readManifest(this.dir);
    if (!read.ok) {
      this.activationFailed(generation, "0.0.0", read.message);
      return;
    }
    try {
      const isolation = this.isolationNow();
      const worker = await this.spawn(read.manifest, generation, isolation);
      if (this.stopped) {
        await worker.terminate();
        return;
      }
      const previous = this.serving;
      this.serving = worker;
      this.isolation = isolation;
      this.manifest = read.manifest;
      this.status = "active";
      this.loadedAt = new Date().toISOString();
      this.lastError = undefined;
      previous?.retire(this.runtime.retireTimeoutMs);
      log("info", `plugins: ${this.id} ${read.manifest.version} (generation ${generation}) is serving`);
      this.runtime.changed();
    } catch (error) {
      this.activationFailed(generation, read.manifest.version, (error as Error).message);
    }
  }

  private activationFailed(generation: number, version: string, message: string): void {
    // The previous version (if any) keeps serving: a broken save must not take a working plugin away.
    this.fail(null, "activation", message, { version, generation });
    if (this.serving === undefined) this.status = "error";
    this.runtime.changed();
  }

  /** Where the next version starts: `plugins.isolation`, unless a thread of this plugin could not be stopped. */
  private isolationNow(): "worker" | "process" {
    return this.threadStuck ? "process" : this.runtime.isolation();
  }

  private spawn(manifest: PluginManifest, generation: number, isolation: "worker" | "process"): Promise<PluginWorker> {
    const { runtime } = this;
    return PluginWorker.start({
      boot: {
        pluginId: this.id,
        name: this.name,
        version: manifest.version,
        generation,
        dir: this.dir,
        entryUrl: manifest.entryUrl,
        supportedApiVersions: SUPPORTED_PLUGIN_API_VERSIONS,
        hookNames: HOOK_NAMES,
      },
      services: runtime.services,
      channel: runtime.takeChannel(this.dir, isolation),
      defaultMaxMessageBytes: runtime.maxMessageBytes(),
      activationTimeoutMs: runtime.activationTimeoutMs,
      abortGraceMs: runtime.abortGraceMs,
      onLog: (level: LogLevel, message: string) => log(level, `[plugin ${this.name}] ${message}`),
      onDeath: (worker, death) => this.died(worker, death),
      onStuck: (worker) => this.stuck(worker),
    });
  }

  private died(worker: PluginWorker, death: WorkerDeath): void {
    if (worker !== this.serving) return; // a retired version ending is nobody's business
    this.serving = undefined;
    // Calls that were running report the failure with their hook; an idle death is reported here.
    if (death.hooksInFlight.length === 0) this.fail(null, death.cause, death.message, worker.boot);
    if (this.breaker.record()) {
      this.fail(
        null,
        death.cause,
        `disabled after ${this.runtime.crashLimitText}; it runs again when one of its files changes or on plugins/reload`,
        worker.boot,
      );
      this.status = "disabled"; // from here on lastError keeps saying why
      this.runtime.changed();
      return;
    }
    this.restart(worker.boot.generation);
  }

  private stuck(worker: PluginWorker): void {
    const first = !this.threadStuck;
    this.threadStuck = true;
    this.fail(
      null,
      "crash",
      "its worker thread did not stop when asked (it is blocked in a system call or in native code, which a thread cannot be " +
        `interrupted in) and was abandoned${first ? "; from now on this plugin runs in a child process, which can always be stopped" : ""}`,
      worker.boot,
    );
    this.runtime.changed();
    // A version restarted in a thread meanwhile (a timeout restarts at once) moves now.
    if (first && !this.stopped && this.status === "active" && this.isolation === "worker") void this.reload("asked");
  }

  private restart(generation: number): void {
    const manifest = this.manifest;
    if (manifest === undefined || this.stopped) return;
    const isolation = this.isolationNow();
    const attempt = this.spawn(manifest, generation, isolation).then(
      (worker) => {
        if (this.stopped || this.serving !== undefined) {
          void worker.terminate(); // stopped meanwhile, or a reload got there first
          return this.serving;
        }
        this.serving = worker;
        this.isolation = isolation;
        return worker;
      },
      (error: Error) => {
        this.status = "error";
        this.fail(null, "activation", `restart after a crash failed: ${error.message}`, { version: manifest.version, generation });
        this.runtime.changed();
        return undefined;
      },
    );
    const tracked: Promise<PluginWorker | undefined> = attempt.finally(() => {
      if (this.restarting === tracked) this.restarting = undefined;
    });
    this.restarting = tracked;
  }

  /** The worker to call, waiting for a restart or a first load in progress; undefined when the plugin cannot run. */
  async worker(): Promise<PluginWorker | undefined> {
    if (this.servingNow() !== undefined) return this.servingNow();
    if (this.restarting !== undefined) await this.restarting;
    else if (this.loading !== undefined) await this.loading;
    return this.servingNow();
  }

  /** Whether a call of `hook` could reach this plugin now (it serves the hook, or is starting). */
  mayRun(hook: HookName): boolean {
    const serving = this.servingNow();
    if (serving !== undefined) return serving.hooks.has(hook);
    return this.restarting !== undefined || this.loading !== undefined;
  }

  private servingNow(): PluginWorker | undefined {
    return this.serving?.alive === true ? this.serving : undefined;
  }

  /** Records a failure as the plugin's last error and reports it (`plugins/didError`). */
  fail(hook: HookName | null, kind: PluginErrorKind, message: string, version: { version: string; generation: number }): void {
    if (this.status !== "disabled") this.lastError = { kind, message, hook, at: new Date().toISOString() };
    log("warn", `plugins: ${this.id}${hook === null ? "" : ` ${hook}`}: ${kind}: ${message}`);
    this.runtime.report({ pluginId: this.id, version: version.version, generation: version.generation, hook, kind, message });
  }

  private async unload(status: PluginStatus): Promise<void> {
    const serving = this.serving;
    this.serving = undefined;
    const changed = this.status !== status;
    this.status = status;
    this.loadedAt = undefined;
    if (serving !== undefined) await serving.terminate();
    if (changed || serving !== undefined) this.runtime.changed();
  }

  /** The plugin's folder is gone, or the host is shutting down. */
  async stop(): Promise<void> {
    this.stopped = true;
    const restarting = this.restarting;
    await this.unload(this.status);
    const restarted = await restarting;
    if (restarted !== undefined) await restarted.terminate();
  }

  ref(): PluginRef {
    const version = this.serving?.boot.version ?? this.manifest?.version ?? "0.0.0";
    return { id: this.id, name: this.name, version, generation: this.serving?.boot.generation ?? this.generation };
  }

  info(): PluginInfo {
    const { version, generation } = this.ref();
    const info: PluginInfo = {
      id: this.id,
      name: this.name,
      version,
      generation,
      source: this.source,
      path: this.dir,
      status: this.status,
      hooks: this.serving !== undefined ? HOOK_NAMES.filter((hook) => this.serving!.hooks.has(hook)) : [],
      trusted: this.source === "global" || this.runtime.isTrusted(this.projectDir!),
      isolation: (this.serving !== undefined ? this.isolation : undefined) ?? this.isolationNow(),
    };
    if (this.projectDir !== undefined) info.projectDir = this.projectDir;
    if (this.loadedAt !== undefined && this.status === "active") info.loadedAt = this.loadedAt;
    if (this.lastError !== undefined) info.lastError = this.lastError;
    return info;
  }
}
