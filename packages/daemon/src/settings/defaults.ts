/** Default settings (docs/design.md#files-and-merge) and the list of keys the settings have. */
import { Settings } from "@base-context/protocol";

export const DEFAULT_SETTINGS: Settings = {
  compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
  branchSummary: { reserveTokens: 16384 },
  context: { mode: "on" },
  tokens: { encoding: "o200k_base", estimator: "exact" },
  // baseURL and model have no default here: the summarizer picks the SDK's URL and its own model.
  summarizer: { provider: "auto", apiKeyEnv: "OPENAI_API_KEY", fallback: true, timeoutMs: 120_000, maxRetries: 3 },
  summary: { repair: true },
  plugins: { hookTimeoutMs: 30_000, enabled: true, order: [] },
};

export type SectionName = keyof Settings;

/**
 * Every `section.key` the settings have, read from the protocol's schema so a key added there is
 * reported in `sources` without a change here.
 */
export const SETTING_KEYS: readonly (readonly [SectionName, string])[] = (Object.keys(Settings.shape) as SectionName[]).flatMap((section) =>
  Object.keys(Settings.shape[section].shape).map((key) => [section, key] as const),
);

export const SECTION_NAMES: readonly SectionName[] = Object.keys(Settings.shape) as SectionName[];

/** Returns a deep copy, so callers can never mutate the shared defaults. */
export function defaultSettings(): Settings {
  return structuredClone(DEFAULT_SETTINGS);
}
