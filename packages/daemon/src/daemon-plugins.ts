/**
 * The plugin host as the daemon runs it (docs/design.md#plugins): the daemon's model and tokenizer offered
 * to plugins (`ctx.complete`, `ctx.countTokens`), the API key kept out of their workers, and a
 * start that never holds up the client — the host starts in the background (or on first use) and
 * a hook that arrives before it is ready waits for it.
 */
import type { PluginCompleteRequest, PluginCompleteResult, PluginError, PluginInfo, Settings } from "@base-context/protocol";
import type { CompactHooks } from "./hooks/compact-hooks.js";
import { CancelledError, RequestFailedError } from "./errors.js";
import { log } from "./log.js";
import { whenFd1Guarded } from "./fd1-guard.js";
import { baseContextHome } from "./paths.js";
import type { PluginHost, PluginHostOptions, PluginCaller, PluginServices } from "./plugins/index.js";
import { AsyncLocalStorage } from "node:async_hooks";
import type { SettingsManager } from "./settings/index.js";
import {
  ClientModelSummarizer,
  DEFAULT_SUMMARIZER_MODEL,
  OpenAISummarizer,
  summarizerChain,
  type ClientModel,
  type Summarizer,
} from "./summarizer/index.js";
import type { TokenCounter } from "./tokens/index.js";
import type { TreeHooks } from "./tree/index.js";

export interface DaemonPluginsOptions {
  env: NodeJS.ProcessEnv;
  settings: SettingsManager;
  counter: TokenCounter;
  /** Hot reload: on for `serve`, off for one-shot CLI commands (watchers would keep them alive). */
  watch: boolean;
  /** The daemon's summarizer choice, whose models `ctx.complete` offers. */
  summarizerFor(settings: Settings["summarizer"], clientModel: ClientModel | undefined): Summarizer;
}

/**
 * The request a hook runs for: its session and the asking client's model. Set around each hook
 * run; the plugin worker serves a plugin's `ctx.complete` in the hook call's async context.
 */
const hookRequest = new AsyncLocalStorage<{
  sessionId: string | undefined;
  clientModel: ClientModel | undefined;
  /** The provider the session's merged settings name: a project may narrow it to "extractive". */
  provider: Settings["summarizer"]["provider"] | undefined;
}>();

interface NewsSubscription {
  attach(host: PluginHost): Disposable;
  detach: Disposable | undefined;
}

/** What a subscription returns (docs/architecture.md#conventions-one-way-to-do-each-thing). */
interface Disposable {
  dispose(): void;
}

export class DaemonPlugins {
  /** The host, once loaded: its code is loaded on first need (a hook, a plugins request, `serve`'s background start). */
  private host: PluginHost | undefined;
  private loading: Promise<PluginHost> | undefined;
  private readonly hostOptions: PluginHostOptions;
  /** Clients' subscriptions to plugin news, made on the host when it is loaded. */
  private readonly news = new Set<NewsSubscription>();
  private starting: Promise<void> | undefined;
  /** Why fd 1 still reaches the client, when it does: plugins then run in child processes only. */
  private fd1Unguarded: string | undefined;
  private ready = false;

  constructor(options: DaemonPluginsOptions) {
    const { env, settings, counter } = options;
    this.hostOptions = {
      home: baseContextHome(env),
      watch: options.watch,
      services: modelServices(settings, counter, options.summarizerFor),
      // The daemon's key variable is read at each worker start, so a settings change applies to the next worker.
      hiddenEnv: () => [settings.get().settings.summarizer.apiKeyEnv, "OPENAI_API_KEY"],
      maxMessageBytes: () => settings.get().settings.plugins.maxMessageBytes,
      // Global settings only (a project may not set it); a change applies to the next version started.
      isolation: () => settings.get().settings.plugins.isolation,
    };
  }

  /**
   * Loads the plugin host's code and makes the host, once. Not before a stdio daemon's fd 1 has
   * stopped reaching its client: plugin code may write there (fd1-guard.ts).
   */
  private loadHost(): Promise<PluginHost> {
    this.loading ??= whenFd1Guarded()
      .then((fd1) => {
        if (fd1.reachesClient) {
          // A worker thread shares the daemon's descriptors: a plugin's write to fd 1 would reach
          // the client. A child process has fd 1 of its own (a pipe to the daemon).
          this.fd1Unguarded = fd1.why ?? "it could not be moved";
          this.hostOptions.isolation = () => "process";
          log("warn", `plugins: file descriptor 1 still carries the protocol (${this.fd1Unguarded}): every plugin runs in a child process (plugins.isolation "process"), whatever the settings say`);
        }
        return import("./plugins/index.js");
      })
      .then(({ PluginHost }) => {
      const loadStarted = performance.now();
      const host = new PluginHost(this.hostOptions);
      for (const subscription of this.news) subscription.detach = subscription.attach(host);
      this.host = host;
      log("debug", `plugins: loaded the plugin host (${(performance.now() - loadStarted).toFixed(0)} ms)`);
      return host;
    });
    return this.loading;
  }

  /** `plugins/didChange` news. */
  onDidChange(listener: (plugins: PluginInfo[]) => void): Disposable {
    return this.subscribe((host) => host.onDidChange(listener));
  }

  /** `plugins/didError` news. */
  onDidError(listener: (error: PluginError) => void): Disposable {
    return this.subscribe((host) => host.onDidError(listener));
  }

  /** Subscribes on the host now if it is loaded, else when it is (loadHost). */
  private subscribe(attach: (host: PluginHost) => Disposable): Disposable {
    const subscription: NewsSubscription = { attach, detach: this.host ? attach(this.host) : undefined };
    this.news.add(subscription);
    return {
      dispose: () => {
        this.news.delete(subscription);
        subscription.detach?.dispose();
      },
    };
  }

  /**
   * Discovers and loads the global plugins, once. Never rejects: a host that cannot start (an
   * unwritable home) is logged and the daemon runs without plugins rather than not at all.
   */
  start(): Promise<void> {
    this.starting ??= this.loadHost()
      .then((host) => host.start())
      .then(
      () => {
        this.ready = true;
      },
      (error: unknown) => {
        this.ready = true;
        log("error", `plugins: the plugin host did not start: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
    return this.starting;
  }

  /**
   * `start` after the current turn of the event loop (so the reply being sent, e.g. to
   * `initialize`, goes out first), then opens `projectDir`'s plugins so they are listed, watched
   * and (if trusted) loaded before its first compaction.
   */
  startInBackground(projectDir?: string): void {
    setImmediate(() => {
      void this.start()
        .then(() => (projectDir === undefined || this.host === undefined ? undefined : this.host.addProject(projectDir)))
        .catch((error: unknown) => log("warn", `plugins: opening ${projectDir ?? "the plugins"} failed: ${error instanceof Error ? error.message : String(error)}`));
    });
  }

  /** `session_before_compact` for the compaction service; the first call waits for the host to start. */
  compactHooks(): CompactHooks {
    return {
      runCompactHook: this.afterStart(async (event, signal, context) =>
        (await this.adapters()).compactHooks(this.requireHost()).runCompactHook(event, signal, context),
      ),
      // Before the host has loaded the global plugins it cannot know: say yes, the run will wait.
      hasCompactHook: (context) => (this.ready && this.host ? this.host.hasHook("session_before_compact", context) : context.settings.plugins.enabled),
    };
  }

  /** `session_before_tree` for the tree service; the first call waits for the host to start. */
  treeHooks(): TreeHooks {
    return {
      runTreeHook: this.afterStart(async (event, signal, context) =>
        (await this.adapters()).treeHooks(this.requireHost()).runTreeHook(event, signal, context),
      ),
    };
  }

  /** The hook adapters (loaded with the host; already loaded when a hook runs after `started`). */
  private adapters(): Promise<typeof import("./plugins/index.js")> {
    return import("./plugins/index.js");
  }

  /** The host a hook runs on: made by `start`, which every hook run waits for. */
  private requireHost(): PluginHost {
    if (!this.host) throw new Error("the plugin host did not load");
    return this.host;
  }

  /** A hook run that first waits for the host to start (see `started`). */
  private afterStart<E, C extends { sessionId?: string | undefined; clientModel?: ClientModel | undefined; settings: Settings }, R>(
    run: (event: E, signal: AbortSignal, context: C) => Promise<R>,
  ): (event: E, signal: AbortSignal, context: C) => Promise<R> {
    return async (event, signal, context) => {
      await this.started(signal);
      const asking = { sessionId: context.sessionId, clientModel: context.clientModel, provider: context.settings.summarizer.provider };
      return hookRequest.run(asking, () => run(event, signal, context));
    };
  }

  /** Waits for `start`, unless the request is cancelled first (then CancelledError, as a hook run would). */
  private async started(signal: AbortSignal): Promise<void> {
    if (this.ready) return;
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason instanceof CancelledError ? signal.reason : new CancelledError());
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      void this.start().then(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }

  async list(projectDir: string | undefined): Promise<PluginInfo[]> {
    await this.start();
    return this.requireHost().list(projectDir);
  }

  async reload(id: string | undefined): Promise<PluginInfo[]> {
    await this.start();
    return this.requireHost().reload(id);
  }

  async setTrust(projectDir: string, trusted: boolean): Promise<void> {
    await this.start();
    await this.requireHost().setTrust(projectDir, trusted);
  }

  /** Ends every worker and watcher (they would keep the process alive); a host still loading is ended once loaded. */
  async dispose(): Promise<void> {
    const host = this.host ?? (await this.loading?.catch(() => undefined));
    await host?.dispose();
  }
}

/**
 * `ctx.complete` and `ctx.countTokens`. The model is the one summaries use (`createSummarizer`'s
 * chain without the extractive summarizer): with `auto`, the model of the client whose request
 * runs the hook, then a model the global settings name (a project cannot point it elsewhere,
 * docs/design.md#what-a-project-may-set). None when the session's project narrows the provider to
 * "extractive": its conversations stay on this machine, whoever asks.
 * A key is read here, in the daemon, and never crosses into a worker.
 */
function modelServices(
  settings: SettingsManager,
  counter: TokenCounter,
  summarizerFor: (settings: Settings["summarizer"], clientModel: ClientModel | undefined) => Summarizer,
): PluginServices {
  return {
    countTokens: (text) => counter.countTextAsync(text),
    complete: async (request: PluginCompleteRequest, signal: AbortSignal, caller: PluginCaller): Promise<PluginCompleteResult> => {
      const asking = hookRequest.getStore();
      // Host and key stay global, but a project that keeps its conversations on this machine
      // (provider "extractive") keeps its plugins' questions there too.
      const global = settings.get().settings.summarizer;
      const summarizerSettings = asking?.provider === "extractive" ? { ...global, provider: "extractive" as const } : global;
      const models = summarizerChain(summarizerFor(summarizerSettings, asking?.clientModel)).filter(
        (member): member is OpenAISummarizer | ClientModelSummarizer =>
          member instanceof OpenAISummarizer || member instanceof ClientModelSummarizer,
      );
      if (models.length === 0) {
        throw new RequestFailedError(
          `ctx.complete: the daemon has no model to offer (${whyNoModel(summarizerSettings, global.provider !== "extractive" && summarizerSettings.provider === "extractive")})`,
          { reason: "no_model" },
        );
      }
      const failures: string[] = [];
      for (const model of models) {
        log("debug", `plugins: ${caller.pluginId} (${caller.hook}) asks ${model.id} for up to ${request.maxTokens} tokens`);
        try {
          const output = await model.complete({
            system: request.system ?? "",
            prompt: request.prompt ?? "",
            ...(request.messages !== undefined ? { conversation: request.messages } : {}),
            maxTokens: request.maxTokens,
            signal,
            ...(asking?.sessionId !== undefined ? { sessionId: asking.sessionId } : {}),
          });
          const answeredBy =
            model instanceof OpenAISummarizer
              ? (summarizerSettings.model ?? DEFAULT_SUMMARIZER_MODEL)
              : (output as { model?: string }).model;
          return {
            text: output.text,
            ...(answeredBy !== undefined ? { model: answeredBy } : {}),
            ...(output.usage !== undefined ? { usage: { input: output.usage.inputTokens, output: output.usage.outputTokens } } : {}),
          };
        } catch (error) {
          if (error instanceof CancelledError || signal.aborted) throw error;
          failures.push(error instanceof Error ? error.message : String(error));
          if (!summarizerSettings.fallback) break;
        }
      }
      throw new RequestFailedError(`ctx.complete failed: ${failures.join("; then ")}`, { reason: "model_failed" });
    },
  };
}

function whyNoModel(summarizer: Settings["summarizer"], projectNarrowed: boolean): string {
  if (projectNarrowed) return 'the project\'s settings narrow summarizer.provider to "extractive"';
  if (summarizer.provider === "extractive") return 'summarizer.provider is "extractive"';
  return 'summarizer.provider is "auto", the client did not offer its model, and the global settings name no summarizer.model';
}
