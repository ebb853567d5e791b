/** Default settings (docs/design.md#files-and-merge) and the list of keys the settings have. */
import { DEFAULT_MAX_MESSAGE_BYTES, Settings } from "@base-context/protocol";

export const DEFAULT_SETTINGS: Settings = {
  compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
  branchSummary: { reserveTokens: 16384 },
  context: { mode: "on" },
  tokens: { encoding: "o200k_base", estimator: "exact" },
  // baseURL and model have no default here: the summarizer picks the SDK's URL and its own model.
  summarizer: { provider: "auto", apiKeyEnv: "OPENAI_API_KEY", fallback: true, timeoutMs: 120_000, maxRetries: 3 },
  plugins: { hookTimeoutMs: 30_000, enabled: true, order: [], maxMessageBytes: 8 * 1024 * 1024, isolation: "worker" },
  // 64 MiB per JSON-RPC message (header checked before the body is read), 16 MiB per entry:
  // far above any context window's worth of text, low enough that a runaway client cannot
  // exhaust the daemon's memory. docs/guarantees.md, "Protocol and connections".
  // A pi line holds one entry (a big tool result, an image in base64); a real session file can
  // pass 1 GB: the import sizes bound what an import may read (docs/guarantees.md).
  limits: {
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    maxEntryBytes: 16 * 1024 * 1024,
    maxSummaryBytes: 1024 * 1024,
    maxImportLineBytes: 64 * 2 ** 20,
    maxImportFileBytes: 4 * 2 ** 30,
  },
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
