import { homedir } from "node:os";
import { join } from "node:path";

/** The global folder: settings, plugins, trust list and the database. `BASE_CONTEXT_HOME` moves it. */
export function baseContextHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.BASE_CONTEXT_HOME && env.BASE_CONTEXT_HOME.length > 0 ? env.BASE_CONTEXT_HOME : join(homedir(), ".base-context");
}

/** The settings file's name: `settings.json` in the Base Context home (global) and in a project's config folder. */
export const SETTINGS_FILE_NAME = "settings.json";

/** The global settings file. */
export function globalSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(baseContextHome(env), SETTINGS_FILE_NAME);
}

export function defaultDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  return env.BASE_CONTEXT_DB && env.BASE_CONTEXT_DB.length > 0 ? env.BASE_CONTEXT_DB : join(baseContextHome(env), "sessions.db");
}

export function projectConfigDir(projectDir: string): string {
  return join(projectDir, ".base-context");
}
