/**
 * The daemon's default settings (docs/design.md#files-and-merge), beside the schema they satisfy:
 * the daemon starts from them, and the plugin SDK's `testSettings` hands them to plugin tests, so
 * a plugin is tested with the settings a daemon would give it.
 */
import type { Settings } from "./methods/settings.js";
import { DEFAULT_MAX_QUEUED_OUTPUT_BYTES } from "./transport/output-flow.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./transport/stream-transport.js";

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
