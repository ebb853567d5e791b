/**
 * Defaults ← global file ← project file, merged one level deep: a file replaces single keys of a
 * section, never a whole section (`{"compaction": {"enabled": false}}` keeps the default
 * reserveTokens); a nested group is merged key by key too (`compaction.prune.minTokens`). Arrays
 * are values, replaced whole (`plugins.order`).
 */
import type { Settings, SettingsFile, SettingsSource } from "@base-context/protocol";
import { defaultSettings, SETTING_KEYS, setValueAt, valueAt } from "./defaults.js";

export interface ResolvedSettings {
  readonly settings: Settings;
  /** `section.key` → where its value came from, for every key the settings have. */
  readonly sources: Record<string, SettingsSource>;
}

export interface SettingsLayer {
  readonly source: Exclude<SettingsSource, "default">;
  readonly values: SettingsFile | undefined;
}

/** Layers in increasing precedence (global, then project); undefined values are skipped. */
export function mergeSettings(layers: readonly SettingsLayer[]): ResolvedSettings {
  const settings = defaultSettings();
  const sources: Record<string, SettingsSource> = {};
  for (const [section, key] of SETTING_KEYS) sources[`${section}.${key}`] = "default";

  for (const layer of layers) {
    if (!layer.values) continue;
    for (const [section, key] of SETTING_KEYS) {
      const value = valueAt(layer.values[section], key);
      if (value === undefined) continue;
      setValueAt(settings[section] as Record<string, unknown>, key, structuredClone(value));
      sources[`${section}.${key}`] = layer.source;
    }
  }
  return { settings, sources };
}
