import { z } from "zod";
import { notification, request } from "../declare.js";

/** The settings file shape (docs/design.md#settings). Every key optional: files hold only what they change. */
export const SettingsFile = z
  .object({
    compaction: z
      .object({
        enabled: z.boolean(),
        reserveTokens: z.number().int().nonnegative(),
        keepRecentTokens: z.number().int().nonnegative(),
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
      })
      .partial()
      .strict(),
  })
  .partial()
  .strict();

export const Settings = z.object({
  compaction: z.object({ enabled: z.boolean(), reserveTokens: z.number().int(), keepRecentTokens: z.number().int() }),
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
    repair: z.boolean().describe('Append what a summary lost of files, errors and constraints under "## Critical Context" (docs/retention.md).'),
  }),
  plugins: z.object({ hookTimeoutMs: z.number().int(), enabled: z.boolean(), order: z.array(z.string()) }),
});

export const SettingsError = z.object({ source: z.enum(["global", "project"]), path: z.string(), message: z.string() });

export const SettingsGet = request(
  "settings/get",
  z.object({ projectDir: z.string().optional() }),
  z.object({
    settings: Settings,
    /** Dotted key → where its value came from. */
    sources: z.record(z.string(), z.enum(["default", "global", "project"])),
    errors: z.array(SettingsError),
  }),
);

export const SettingsDidChange = notification(
  "settings/didChange",
  z.object({ projectDir: z.string().optional(), errors: z.array(SettingsError) }),
);

export type SettingsFile = z.infer<typeof SettingsFile>;
export type Settings = z.infer<typeof Settings>;
export type SettingsError = z.infer<typeof SettingsError>;
/** Where a setting's value came from. */
export type SettingsSource = "default" | "global" | "project";
