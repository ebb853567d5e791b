/**
 * Helpers for the plugin end-to-end tests: plugin folders written into a daemon's home (or a
 * project), a session with something to compact, and the daemon's plugin notifications collected.
 */
import {
  CompactionRun,
  PluginsDidChange,
  PluginsDidError,
  PluginsList,
  SessionCreate,
  type BaseContextClient,
  type CompactionEntry,
  type PluginError,
  type PluginInfo,
  type SessionEntry,
} from "@base-context/protocol";
import { cpSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { appendAll, assistant, toolResult, user } from "../fixtures/e2e.js";
import { startDaemon, type TestDaemon } from "./daemon.js";
import { tempDirs, type TempDirs } from "./temp-dir.js";
import { waitFor } from "./wait.js";

export const EXAMPLES_DIR = fileURLToPath(new URL("../../examples/plugins/", import.meta.url));

/** Writes `<root>/<name>/` with a package.json naming `index.mjs` (or `main`) and the given files. */
export function writePlugin(
  root: string,
  name: string,
  files: Record<string, string>,
  options: { main?: string; version?: string } = {},
): string {
  const dir = join(root, name);
  const main = options.main ?? "index.mjs";
  const all = {
    "package.json": JSON.stringify({ name, version: options.version ?? "1.0.0", type: "module", baseContext: { apiVersion: 1, main } }),
    ...files,
  };
  for (const [file, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

/** A plugin whose `session_before_compact` (and optionally `session_before_tree`) bodies are given as source. */
export function hookPlugin(hooks: { compact?: string; tree?: string; preamble?: string }): Record<string, string> {
  const parts = [];
  if (hooks.compact !== undefined) parts.push(`async session_before_compact(event, ctx) {\n${hooks.compact}\n}`);
  if (hooks.tree !== undefined) parts.push(`async session_before_tree(event, ctx) {\n${hooks.tree}\n}`);
  return { "index.mjs": `${hooks.preamble ?? ""}\nexport default { name: "test", apiVersion: 1, hooks: {\n${parts.join(",\n")}\n} };\n` };
}

/** A compact hook body that returns `summary` for the prepared range, with `details`. */
export function replaceSummary(summary: string, details: unknown = { by: "test" }): string {
  return `const p = event.preparation;
return { compaction: { summary: ${JSON.stringify(summary)}, firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore, details: ${JSON.stringify(details)} } };`;
}

/** Plugins live in `<home>/plugins`. */
export const pluginsRoot = (home: string): string => join(home, "plugins");
export const projectPluginsRoot = (projectDir: string): string => join(projectDir, ".base-context", "plugins");

/** Copies an example plugin as a user installs it: the folder as is, without node_modules or tests. */
export function installExample(name: string, root: string): string {
  const target = join(root, name);
  cpSync(join(EXAMPLES_DIR, name), target, {
    recursive: true,
    filter: (source) => basename(source) !== "node_modules" && !source.endsWith(".test.ts"),
  });
  return target;
}

/**
 * How many editors save: a temporary file renamed over the original. The temporary name is one
 * the host ignores (`~` backup style), as it ignores editors' own temporary files.
 */
export function atomicSave(path: string, text: string): void {
  const temporary = `${path}~`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

/**
 * A finished turn and a new question: with keepRecentTokens 1 the cut is clean before the last
 * user message, the four entries before it are summarized.
 */
export async function compactableSession(client: BaseContextClient, cwd: string): Promise<{ sessionId: string; entries: SessionEntry[] }> {
  const { session } = await client.request(SessionCreate, { cwd });
  const entries = await appendAll(client, session.id, [
    user("Rename parseConfig to loadConfig everywhere."),
    assistant("Reading the config module first.", { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "src/config.ts" } }] }),
    toolResult("call_1", "read", "export function parseConfig() {}"),
    assistant("Renamed it in src/config.ts and updated 3 call sites."),
    user("Now run the tests."),
  ]);
  return { sessionId: session.id, entries };
}

/**
 * Settings for a home whose sessions always have something to compact. Repair is off, so a
 * plugin's summary is stored exactly as it returned it (test/retention.e2e.test.ts turns it on).
 */
export const COMPACT_EVERYTHING = { compaction: { keepRecentTokens: 1, reserveTokens: 2000 }, summary: { repair: false } };

/** Runs a compaction and returns its result with the entry typed. */
export async function compact(
  client: BaseContextClient,
  sessionId: string,
  options: { signal?: AbortSignal; workDoneToken?: string } = {},
) {
  const result = await client.request(
    CompactionRun,
    { sessionId, ...(options.workDoneToken !== undefined ? { workDoneToken: options.workDoneToken } : {}) },
    options.signal ? { signal: options.signal } : {},
  );
  return { ...result, compaction: result.entry as CompactionEntry | undefined };
}

/** Everything the daemon said about plugins since `watchPlugins` was called. */
export interface PluginNews {
  errors: PluginError[];
  changes: PluginInfo[][];
  dispose(): void;
}

export function watchPlugins(client: BaseContextClient): PluginNews {
  const news = { errors: [] as PluginError[], changes: [] as PluginInfo[][] };
  const subscriptions = [
    client.onNotification(PluginsDidError, (error) => news.errors.push(error)),
    client.onNotification(PluginsDidChange, ({ plugins }) => news.changes.push(plugins)),
  ];
  return { ...news, dispose: () => subscriptions.forEach((subscription) => subscription.dispose()) };
}

/** One plugin as `plugins/list` shows it. */
export async function pluginInfo(client: BaseContextClient, name: string, projectDir?: string): Promise<PluginInfo | undefined> {
  const { plugins } = await client.request(PluginsList, projectDir === undefined ? {} : { projectDir });
  return plugins.find((plugin) => plugin.name === name);
}

/** Waits until `plugins/list` shows the plugin in a state `check` accepts. */
export async function waitForPlugin(
  client: BaseContextClient,
  name: string,
  check: (info: PluginInfo) => boolean,
  timeoutMs = 10_000,
): Promise<PluginInfo> {
  return waitFor(
    async () => {
      const info = await pluginInfo(client, name);
      return info !== undefined && check(info) ? info : undefined;
    },
    { timeoutMs, intervalMs: 20, message: `plugin ${name} in the expected state` },
  );
}

export interface PluginDaemon {
  d: TestDaemon;
  client: BaseContextClient;
  home: string;
  /** plugins/didError and plugins/didChange since the daemon started. */
  news: PluginNews;
  /** A project folder for the test's sessions (no plugins of its own unless the test adds some). */
  project: string;
}

export interface PluginDaemonOptions {
  /** Global plugins: folder name → files. */
  plugins?: Record<string, Record<string, string>>;
  /** Global settings, over COMPACT_EVERYTHING. */
  settings?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  /** The daemon's entry point (default DAEMON_MAIN, support/daemon.ts). */
  main?: string;
  /** Called before `initialize` (e.g. to answer `model/complete`, which offers the client's model). */
  beforeInitialize?(client: BaseContextClient): void;
}

/** A fresh daemon over stdio whose temporary home holds these plugins and settings. */
export async function startPluginDaemon(dirs: TempDirs, options: PluginDaemonOptions = {}): Promise<PluginDaemon> {
  const home = dirs.make("bc-plugins-home-");
  writeFileSync(join(home, "settings.json"), JSON.stringify({ ...COMPACT_EVERYTHING, ...options.settings }));
  for (const [name, files] of Object.entries(options.plugins ?? {})) writePlugin(pluginsRoot(home), name, files);
  const d = await startDaemon({
    home,
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.main !== undefined ? { main: options.main } : {}),
    initialize: false,
  });
  options.beforeInitialize?.(d.client);
  await d.client.initialize();
  return { d, client: d.client, home, news: watchPlugins(d.client), project: dirs.make("bc-plugins-project-") };
}

/** What a test of a file using usePluginDaemons starts its daemons and makes its folders with. */
export interface PluginDaemons {
  /** Temporary folders (homes, projects, markers), removed after each test. */
  readonly dirs: TempDirs;
  /** startPluginDaemon in `dirs`; the daemon is closed after the test. */
  start(options?: PluginDaemonOptions): Promise<PluginDaemon>;
  /** A daemon started some other way (e.g. on a home the test laid out), closed after the test too. */
  closeAfterTest(d: TestDaemon): TestDaemon;
}

/**
 * For a file whose tests each start a daemon of their own: after each test, the daemons it
 * started are closed, then its temporary folders (their homes among them) removed.
 *
 *   const daemons = usePluginDaemons();
 *   it("…", async () => { const { client, project } = await daemons.start({ plugins: { … } }); … });
 */
export function usePluginDaemons(): PluginDaemons {
  const dirs = tempDirs();
  const running: TestDaemon[] = [];
  afterEach(async () => {
    for (const d of running.splice(0)) await d.close();
    dirs.cleanup();
  });
  const closeAfterTest = (d: TestDaemon): TestDaemon => {
    running.push(d);
    return d;
  };
  return {
    dirs,
    async start(options = {}) {
      const setup = await startPluginDaemon(dirs, options);
      closeAfterTest(setup.d);
      return setup;
    },
    closeAfterTest,
  };
}
