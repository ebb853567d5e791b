/** Default settings (docs/design.md#files-and-merge) and the list of keys the settings have. */
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_QUEUED_OUTPUT_BYTES, Settings } from "@base-context/protocol";
import { z } from "zod";

export const DEFAULT_SETTINGS: Settings = {
  compaction: {
    enabled: true,
    reserveTokens: 16384,
    keepRecentTokens: 20000,
    prune: { enabled: true, protectTokens: 40_000, minTokens: 1_000, minSavings: 20_000 },
  },
  branchSummary: { reserveTokens: 16384 },
  context: { mode: "on" },
  tokens: { encoding: "o200k_base", estimator: "exact" },
  // baseURL and model have no default here: the summarizer picks the SDK's URL and its own model.
  summarizer: { provider: "auto", apiKeyEnv: "OPENAI_API_KEY", fallback: true, timeoutMs: 120_000, maxRetries: 3 },
  summary: { repair: true },
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
    maxQueuedOutputBytes: DEFAULT_MAX_QUEUED_OUTPUT_BYTES,
  },
  // No URL: the SQLite file in the Base Context home (docs/storage.md).
  store: {},
};

export type SectionName = keyof Settings;

/**
 * Every `section.key` the settings have, read from the protocol's schema so a key added there is
 * reported in `sources` without a change here. A nested group (`compaction.prune`) is listed key
 * by key with a dotted `key` ("prune.minTokens"), so a file can set one key of it.
 */
export const SETTING_KEYS: readonly (readonly [SectionName, string])[] = (Object.keys(Settings.shape) as SectionName[]).flatMap((section) =>
  leafKeys(Settings.shape[section]).map((key) => [section, key] as const),
);

function leafKeys(schema: z.ZodType): string[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([key, value]) =>
    value instanceof z.ZodObject ? leafKeys(value).map((inner) => `${key}.${inner}`) : [key],
  );
}

/** The value at a dotted key inside a section's object (undefined when a level is missing). */
export function valueAt(section: unknown, dottedKey: string): unknown {
  let value: unknown = section;
  for (const part of dottedKey.split(".")) {
    if (typeof value !== "object" || value === null || !(part in value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Sets a dotted key inside a section's object (its levels exist: the defaults have them all). */
export function setValueAt(section: Record<string, unknown>, dottedKey: string, value: unknown): void {
  const parts = dottedKey.split(".");
  let target = section;
  for (const part of parts.slice(0, -1)) target = target[part] as Record<string, unknown>;
  target[parts[parts.length - 1]!] = value;
}

export const SECTION_NAMES: readonly SectionName[] = Object.keys(Settings.shape) as SectionName[];

/** Returns a deep copy, so callers can never mutate the shared defaults. */
export function defaultSettings(): Settings {
  return structuredClone(DEFAULT_SETTINGS);
}
