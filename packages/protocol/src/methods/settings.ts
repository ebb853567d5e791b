import { z } from "zod";
import { notification, request } from "../declare.js";

// Object and union schemas are `z.lazy`: built on first use, not when this module loads (see
// ../entries.ts, docs/architecture.md#start-path-and-bundles).
// `Settings` and `PruneSettings` are not: the daemon reads their `.shape` when its settings code loads.

/**
 * `compaction.*`'s declared keys, as a preparation carries them and requests override them. Built at
 * load (not lazy): declarations take its `.partial()`.
 */
export const CompactionSettings = z.object({
  enabled: z.boolean(),
  reserveTokens: z.number().int().nonnegative(),
  keepRecentTokens: z.number().int().nonnegative(),
});
export type CompactionSettings = z.infer<typeof CompactionSettings>;

/** The settings file shape (docs/design.md#settings). Every key optional: files hold only what they change. */
export const SettingsFile = z.lazy(() =>
  z
    .object({
      compaction: z
        .object({
          enabled: z.boolean(),
          reserveTokens: z.number().int().nonnegative(),
          keepRecentTokens: z.number().int().nonnegative(),
          /** The prune rung (docs/compaction-rungs.md); a file sets single keys of it. */
          prune: z
            .object({
              enabled: z.boolean(),
              protectTokens: z.number().int().nonnegative(),
              minTokens: z.number().int().nonnegative(),
              minSavings: z.number().int().nonnegative(),
            })
            .partial()
            .strict(),
        })
        .partial()
        .strict(),
      branchSummary: z.object({ reserveTokens: z.number().int().nonnegative() }).partial().strict(),
      context: z.object({ mode: z.enum(["on", "off"]) }).partial().strict(),
      tokens: z
        .object({ encoding: z.enum(["o200k_base", "cl100k_base"]), estimator: z.enum(["exact", "chars4"]) })
        .partial()
        .strict(),
      summarizer: z
        .object({
          provider: z.enum(["auto", "openai", "extractive"]),
          baseURL: z.string().url(),
          model: z.string().min(1),
          apiKeyEnv: z.string().min(1),
          fallback: z.boolean(),
          timeoutMs: z.number().int().positive(),
          maxRetries: z.number().int().nonnegative(),
        })
        .partial()
        .strict(),
      summary: z.object({ repair: z.boolean() }).partial().strict(),
      plugins: z
        .object({
          hookTimeoutMs: z.number().int().positive(),
          enabled: z.boolean(),
          order: z.array(z.string()),
          maxMessageBytes: z.number().int().min(1024),
          isolation: z.enum(["worker", "process"]),
        })
        .partial()
        .strict(),
      /** Upper bounds on what the daemon accepts (docs/guarantees.md). */
      limits: z
        .object({
          maxMessageBytes: z.number().int().min(1024),
          maxEntryBytes: z.number().int().min(1024),
          maxSummaryBytes: z.number().int().min(1024),
          /** Longest line `session/import` reads from a file, in bytes. */
          maxImportLineBytes: z.number().int().positive(),
          /** Largest file `session/import` reads, in bytes. */
          maxImportFileBytes: z.number().int().positive(),
          /** Bytes of replies and notifications waiting to be written to one client before the daemon stops reading its requests. */
          maxQueuedOutputBytes: z.number().int().min(1024 * 1024),
        })
        .partial()
        .strict(),
      /** Where sessions are stored (docs/storage.md). User settings only. */
      store: z.object({ url: z.string().min(1) }).partial().strict(),
    })
    .partial()
    .strict(),
);

/**
 * `compaction.prune`: tool results older than the newest `protectTokens` of the context and larger
 * than `minTokens` may be hidden behind a stub; turn/end prunes instead of summarizing when that
 * alone brings the context `minSavings` under the threshold, hiding only the oldest outputs that
 * takes. `enabled: false` never prunes.
 */
export const PruneSettings = z.object({
  enabled: z.boolean(),
  protectTokens: z.number().int(),
  minTokens: z.number().int(),
  minSavings: z.number().int(),
});
export type PruneSettings = z.infer<typeof PruneSettings>;

export const Settings = z.object({
  compaction: z.object({
    enabled: z.boolean(),
    reserveTokens: z.number().int(),
    keepRecentTokens: z.number().int(),
    prune: PruneSettings,
  }),
  branchSummary: z.object({ reserveTokens: z.number().int() }),
  context: z.object({ mode: z.enum(["on", "off"]) }),
  tokens: z.object({ encoding: z.enum(["o200k_base", "cl100k_base"]), estimator: z.enum(["exact", "chars4"]) }),
  summarizer: z.object({
    provider: z.enum(["auto", "openai", "extractive"]),
    baseURL: z.string().optional(),
    model: z.string().optional(),
    apiKeyEnv: z.string(),
    fallback: z.boolean(),
    timeoutMs: z.number().int(),
    maxRetries: z.number().int(),
  }),
  /** `repair`: append what a summary lost of files, errors and constraints under "## Critical Context" (docs/retention.md). */
  summary: z.object({
    repair: z
      .boolean()
      .describe('Append what a summary lost of files, errors and constraints under "## Critical Context" (docs/retention.md).'),
  }),
  plugins: z.object({
    hookTimeoutMs: z.number().int(),
    enabled: z.boolean(),
    order: z.array(z.string()),
    /** Largest message crossing a plugin's worker or process boundary, either way (UTF-8 bytes of its JSON). */
    maxMessageBytes: z.number().int(),
    /** "worker": threads of the daemon (contain faults); "process": child processes under Node's permission model. */
    isolation: z.enum(["worker", "process"]),
  }),
  /**
   * Sizes the daemon accepts (bytes): the largest JSON-RPC message, the largest entry, the largest
   * stored summary (compaction or branch summary, in UTF-8 bytes), and the longest line and largest
   * file an import reads. Global only: a project's settings file that sets any of them is ignored
   * and the error reported, like `plugins.isolation` and `plugins.maxMessageBytes`.
   */
  limits: z.object({
    maxMessageBytes: z.number().int(),
    maxEntryBytes: z.number().int(),
    maxSummaryBytes: z.number().int(),
    maxImportLineBytes: z.number().int(),
    maxImportFileBytes: z.number().int(),
    /**
     * Bytes of replies and notifications waiting to be written to one connection: above it the
     * daemon reads no more of that client's requests until they have drained below half.
     */
    maxQueuedOutputBytes: z.number().int(),
  }),
  /**
   * Where sessions are stored (docs/storage.md): absent = the SQLite file in the Base Context home;
   * `postgres://user@host:port/database` = a PostgreSQL server many daemons share. User settings
   * only (a project's file that sets it is refused); `BASE_CONTEXT_STORE_URL` wins over it.
   */
  store: z.object({
    url: z
      .string()
      .optional()
      .describe("postgres://… to store sessions in PostgreSQL; absent: the SQLite file (docs/storage.md). User settings only."),
  }),
});

export const SettingsError = z.lazy(() =>
  z.object({ source: z.enum(["global", "project"]), path: z.string(), message: z.string() }),
);

export const SettingsGet = request(
  "settings/get",
  () => z.object({ projectDir: z.string().optional() }),
  () => z.object({
    settings: Settings,
    /** Dotted key → where its value came from. */
    sources: z.record(z.string(), z.enum(["default", "global", "project"])),
    errors: z.array(SettingsError),
  }),
);

export const SettingsDidChange = notification(
  "settings/didChange",
  () => z.object({ projectDir: z.string().optional(), errors: z.array(SettingsError) }),
);

export type SettingsFile = z.infer<typeof SettingsFile>;
export type Settings = z.infer<typeof Settings>;
export type SettingsError = z.infer<typeof SettingsError>;
/** Where a setting's value came from. */
export type SettingsSource = "default" | "global" | "project";
