/**
 * The composition root: builds every part of a running daemon from its options and wires the
 * server's handler table. `serve` (stdio) and the other CLI commands use the same parts.
 */
import { join } from "node:path";
import { ImportStates, SessionService } from "./sessions/index.js";
import { openStore, storeLocation, type SessionStore, type StoreLocation } from "./store/index.js";
import { createTokenCounter } from "./tokens/index.js";
import type { TokenCounter } from "./tokens/counter.js";
import { SettingsManager, type SessionSettings } from "./settings/index.js";
import { baseContextHome } from "./paths.js";
import { secureHomeFolder } from "./store/permissions.js";
import { ContextService } from "./context/service.js";
import { CompactionService } from "./compaction/service.js";
import { TurnEndService } from "./compaction/turn-end.js";
import type { Settings } from "@base-context/protocol";
import { SessionLocks } from "./sessions/session-locks.js";
import { TreeService, type TreeHooks } from "./tree/index.js";
import { DaemonPlugins } from "./daemon-plugins.js";
import { createSummarizer, type ClientModel, type Summarizer } from "./summarizer/index.js";


export interface DaemonOptions {
  /** The SQLite file when no store URL is set (docs/storage.md); default: sessions.db in the home. */
  databasePath?: string;
  env?: NodeJS.ProcessEnv;
  /** `session_before_tree` instead of the plugin host's (tests). */
  treeHooks?: TreeHooks;
  /**
   * Watch the settings files and the plugin folders (default true; one-shot CLI commands turn it
   * off so they exit promptly). Plugins still run in those commands: the host starts on first use.
   */
  watchSettings?: boolean;
  /** Settings already read (serve reads them before the database is opened); default: read here. */
  settings?: SettingsManager;
}

export class Daemon {
  private readonly store: SessionStore;
  readonly counter: TokenCounter;
  readonly sessions: SessionService;
  readonly settings: SettingsManager;
  readonly context: ContextService;
  /** One long operation (compaction, tree navigation) per session at a time. */
  readonly sessionLocks = new SessionLocks();
  readonly tree: TreeService;
  readonly compaction: CompactionService;
  /** `turn/end`: the decision layer in front of compaction at turn boundaries. */
  readonly turns: TurnEndService;
  /**
   * Third-party plugins (`session_before_compact`, `session_before_tree`). `serve` starts them in
   * the background after `initialize`; anywhere else they start when a hook first runs.
   */
  readonly plugins: DaemonPlugins;
  /** `session_before_tree` as tree navigation and `summarize/branch` run it. */
  readonly treeHooks: TreeHooks;
  /** The folder of the settings, plugins and (by default) the SQLite file. */
  readonly home: string;
  /** Where the sessions are stored (`daemon/status`). */
  readonly storeLocation: StoreLocation;
  private readonly env: NodeJS.ProcessEnv;
  constructor(options: DaemonOptions = {}) {
    const env = options.env ?? process.env;
    // Conversations, settings and plugins live here: owner-only, created so or tightened.
    this.home = baseContextHome(env);
    secureHomeFolder(this.home);
    this.env = env;
    this.settings = options.settings ?? new SettingsManager({ env, ...(options.watchSettings === false ? { watch: false } : {}) });
    // Token counts are stored once per entry, so the tokenizer comes from the global settings:
    // a per-project encoding would make counts of one database incomparable.
    const global = this.settings.get().settings;
    this.counter = createTokenCounter(global.tokens);
    // BASE_CONTEXT_STORE_URL, else the user's store.url, else the SQLite file (store/open-store.ts).
    this.storeLocation = storeLocation({ env, settingsUrl: global.store.url, path: options.databasePath });
    this.store = openStore({ env, location: this.storeLocation });
    // Limits are the global settings' (a project's file cannot raise them).
    const maxEntryBytes = () => this.settings.get().settings.limits.maxEntryBytes;
    this.sessions = new SessionService(this.store, this.counter, {
      maxEntryBytes,
      // Where the imports of files stopped: a file imported again is read from there (the hook's imports).
      import: { maxEntryBytes, limits: () => this.settings.get().settings.limits, states: new ImportStates(join(this.home, "imports")) },
    });
    this.plugins = new DaemonPlugins({
      env,
      settings: this.settings,
      counter: this.counter,
      watch: options.watchSettings !== false,
      summarizerFor: (settings, clientModel) => this.summarizerFor(settings, clientModel),
    });
    this.context = new ContextService(this.sessions, this.sessionSettings);
    this.treeHooks = options.treeHooks ?? this.plugins.treeHooks();
    this.tree = new TreeService(
      {
        sessions: this.sessions,
        settings: this.sessionSettings,
        locks: this.sessionLocks,
        env,
        summarizerFor: (settings, _env, clientModel) => this.summarizerFor(settings, clientModel),
      },
      this.treeHooks,
    );
    this.compaction = new CompactionService({
      sessions: this.sessions,
      settings: this.sessionSettings,
      locks: this.sessionLocks,
      env,
      summarizerFor: (settings, clientModel) => this.summarizerFor(settings, clientModel),
      hooks: this.plugins.compactHooks(),
    });
    this.compaction.markInterruptedJobs();
    this.turns = new TurnEndService({
      sessions: this.sessions,
      compaction: this.compaction,
      settings: this.sessionSettings,
    });
  }

  /**
   * A session belongs to the project it was created in (its cwd): that project's settings apply,
   * so one daemon serving several projects treats each by its own rules. (A field, so it is set
   * before the constructor hands it to the services.)
   */
  readonly sessionSettings: SessionSettings = {
    forSession: (sessionId) => this.settings.get(this.store.requireSession(sessionId).cwd).settings,
    sourcesFor: (sessionId) => this.settings.get(this.store.requireSession(sessionId).cwd).sources,
  };

  /**
   * The summarizer for a session's `summarizer.*` settings and the asking client's model. Whether
   * `auto` may use a model host is decided by the global settings alone (a model they name): a
   * project's settings may narrow where conversations go, never widen it.
   */
  summarizerFor(settings: Settings["summarizer"], clientModel?: ClientModel): Summarizer {
    return createSummarizer(settings, this.env, { clientModel, userNamedModel: this.userNamedModel() });
  }

  /** The user's global settings name a summarizer model (`summarizer.model`). */
  userNamedModel(): boolean {
    return this.settings.get().settings.summarizer.model !== undefined;
  }

  async dispose(): Promise<void> {
    // Workers first: a plugin call still running must not outlive the store it would write to.
    await this.plugins.dispose();
    this.sessions.stopWatching();
    this.settings.dispose();
    await this.counter.dispose();
    await this.store.close();
  }
}
