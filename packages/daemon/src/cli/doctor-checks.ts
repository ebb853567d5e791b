/**
 * The checks of `base-context doctor` that need no network: the database, the settings files,
 * the tokenizer and the plugins. Each returns what it found and, for a problem, what to try.
 * None of them changes anything (the database is opened as is, not migrated).
 */
import Database from "better-sqlite3";
import { accessSync, constants as fsConstants, existsSync } from "node:fs";
import { dirname } from "node:path";
import type { PluginError, PluginInfo, Settings, SettingsError } from "@base-context/protocol";
import { PluginHost } from "../plugins/index.js";
import { defaultSettings } from "../settings/index.js";
import { trialRunPlugins } from "./doctor-plugin-trial.js";
import { DatabaseTooNewError, SCHEMA_VERSION } from "../sessions/database-file.js";
import { createTokenCounter } from "../tokens/index.js";
import { databaseFailure } from "./open-daemon.js";
import { displayPath, plural } from "./output.js";

export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface CheckResult {
  name: string;
  status: CheckStatus;
  /** One line: what was found. */
  summary: string;
  /** What to try, for a warning or a failure. */
  fixes: string[];
}

const check = (name: string, status: CheckStatus, summary: string, fixes: string[] = []): CheckResult => ({ name, status, summary, fixes });

export function checkDatabase(databasePath: string): CheckResult {
  const shown = displayPath(databasePath);
  if (!existsSync(databasePath)) {
    // No file to open, but the driver must load for one to be created (its native addon may be built for another Node).
    try {
      new Database(":memory:").close();
    } catch (error) {
      const failure = databaseFailure(databasePath, error);
      return check("database", "fail", failure.message, [...failure.hints]);
    }
    const folder = nearestExistingFolder(dirname(databasePath));
    try {
      accessSync(folder, fsConstants.W_OK | fsConstants.X_OK);
      return check("database", "ok", `${shown} does not exist yet; it is created on first use`);
    } catch {
      return check("database", "fail", `${shown} does not exist and cannot be created: ${displayPath(folder)} is not writable`, [
        `Make ${folder} writable, or set BASE_CONTEXT_HOME to a folder you own.`,
      ]);
    }
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(databasePath, { fileMustExist: true, timeout: 2000 });
    const integrity = db.pragma("quick_check", { simple: true });
    if (integrity !== "ok") throw Object.assign(new Error(`integrity check: ${String(integrity)}`), { code: "SQLITE_CORRUPT" });
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw new DatabaseTooNewError(version, SCHEMA_VERSION);
    // Takes the write lock and gives it back: proves the file (and its journal) can be written.
    db.exec("BEGIN IMMEDIATE; ROLLBACK;");
    const sessions = version === 0 ? 0 : (db.prepare("SELECT count(*) FROM sessions").pluck().get() as number);
    const schema = version === SCHEMA_VERSION ? `schema ${version}` : `schema ${version} (migrated to ${SCHEMA_VERSION} on next start)`;
    return check("database", "ok", `${shown}: ${schema}, ${plural(sessions, "session")}, readable and writable`);
  } catch (error) {
    const failure = databaseFailure(databasePath, error);
    return check("database", "fail", failure.message, [...failure.hints]);
  } finally {
    db?.close();
  }
}

export function checkSettings(
  errors: readonly SettingsError[],
  files: readonly { source: string; path: string; exists: boolean }[],
): CheckResult {
  const found = files.map((file) => `${file.source} ${file.exists ? displayPath(file.path) : "none"}`).join(", ");
  if (errors.length === 0) return check("settings", "ok", found);
  return check(
    "settings",
    "warn",
    `${plural(errors.length, "problem")}; the files named are ignored: ${errors.map((error) => `${displayPath(error.path)}: ${error.message}`).join("; ")}`,
    ["Fix the file (or remove it), then run: base-context settings"],
  );
}

/** Loads the configured encoding (in the counter's worker, as the daemon does) and counts a sample. */
export async function checkTokenizer(tokens: Settings["tokens"]): Promise<CheckResult> {
  const counter = createTokenCounter(tokens);
  const started = performance.now();
  const sample = "Hello, world!";
  try {
    const count = await counter.countTextAsync(sample);
    if (!(count > 0)) throw new Error(`counted ${count} tokens in "${sample}"`);
    const ms = Math.round(performance.now() - started);
    const what = tokens.estimator === "chars4" ? "chars4 estimate (ceil(characters / 4))" : `${tokens.encoding} (exact)`;
    return check("tokenizer", "ok", `${what}: "${sample}" = ${plural(count, "token")} in ${ms} ms`);
  } catch (error) {
    return check("tokenizer", "fail", `${tokens.encoding} does not load: ${error instanceof Error ? error.message : String(error)}`, [
      "Reinstall the dependencies (pnpm install): the encoding ships with gpt-tokenizer.",
      'Meanwhile, "tokens": { "estimator": "chars4" } in settings.json counts without an encoding.',
    ]);
  } finally {
    await counter.dispose();
  }
}

/** Starts the plugins the daemon would start (without watching) and reports each one's state. */
export async function checkPlugins(
  home: string,
  projectDir: string | undefined,
  settings: Settings = defaultSettings(),
): Promise<CheckResult> {
  // Tried as the daemon runs them: in its worker threads or in child processes (plugins.isolation).
  const host = new PluginHost({ home, watch: false, isolation: () => settings.plugins.isolation });
  try {
    await host.start();
    let plugins = await host.list(projectDir);
    if (plugins.length === 0) return check("plugins", "ok", "none installed");
    // A plugin that loads can still fail when asked: try its hooks on a sample session.
    const trialFailures = await trialRunPlugins(host, settings, projectDir);
    plugins = await host.list(projectDir);
    // Each plugin's first failure (the compaction hook is tried before the tree hook).
    const failedTrial = new Map<string, PluginError>();
    for (const failure of trialFailures) if (!failedTrial.has(failure.pluginId)) failedTrial.set(failure.pluginId, failure);
    const broken = plugins.filter((plugin) => plugin.status === "error" || plugin.status === "disabled" || failedTrial.has(plugin.id));
    const untrusted = plugins.filter((plugin) => plugin.status === "untrusted");
    const states = plugins
      .map(
        (plugin) =>
          `${plugin.name}@${plugin.version} ${failedTrial.has(plugin.id) && plugin.status === "active" ? "failed when tried" : plugin.status}` +
          ` (${trustText(plugin)})`,
      )
      .join(", ");
    const why = (plugin: PluginInfo) => {
      const failure = failedTrial.get(plugin.id);
      if (failure) return `${failure.kind} in ${failure.hook ?? "loading"}: ${failure.message}`;
      return plugin.lastError?.message ?? plugin.status;
    };
    const fixes = [
      ...broken.map(
        (plugin) =>
          `${plugin.name}: ${why(plugin)} — fix ${displayPath(plugin.path)}; a running daemon reloads it when the files change (or on plugins/reload)`,
      ),
      ...(untrusted.length > 0 && projectDir !== undefined
        ? [
            `Project plugins run once you trust the project (${untrusted.map((plugin) => plugin.name).join(", ")}): project/trust { projectDir: "${projectDir}", trusted: true }`,
          ]
        : []),
    ];
    return check("plugins", broken.length > 0 ? "fail" : untrusted.length > 0 ? "warn" : "ok", states, fixes);
  } catch (error) {
    return check("plugins", "fail", `the plugin host did not start: ${error instanceof Error ? error.message : String(error)}`, [
      `Check that ${displayPath(home)} is a folder you can write.`,
    ]);
  } finally {
    await host.dispose();
  }
}

function nearestExistingFolder(folder: string): string {
  let current = folder;
  while (!existsSync(current) && dirname(current) !== current) current = dirname(current);
  return current;
}

/** A plugin's trust and isolation, as doctor and `plugins list` say them (docs/plugins.md#what-a-trusted-plugin-can-do). */
export function trustText(plugin: Pick<PluginInfo, "trusted" | "isolation">): string {
  return `${plugin.trusted ? "trusted" : "not trusted"}, ${plugin.isolation === "process" ? "child process" : "worker thread"}`;
}
