export {
  SettingsManager,
  SETTINGS_FILE_NAME,
  type Disposable,
  type SettingsChangeEvent,
  type SettingsManagerOptions,
  type SettingsSnapshot,
} from "./manager.js";
export { DEFAULT_SETTINGS, SETTING_KEYS, defaultSettings, valueAt } from "./defaults.js";
export { mergeSettings, type ResolvedSettings, type SettingsLayer } from "./merge.js";
export { parseSettingsText, readSettingsFile, PROJECT_FORBIDDEN_KEYS, type FileSource, type LoadedSettingsFile } from "./file.js";
export { watchSettingsFile, type FileWatch } from "./watch.js";
export type { SessionSettings } from "./session-settings.js";
