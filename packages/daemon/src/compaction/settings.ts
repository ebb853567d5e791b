/**
 * Which settings a compaction runs with, and when it must not run
 * (docs/design.md#when-compaction-is-off): `context.mode: "off"` turns off all context optimization, manual `/compact`
 * included; `compaction.enabled: false` only turns off the automatic threshold compaction.
 *
 * With the client's window, the sizes the user did not set follow their share of it
 * (core's `fitToWindow`, docs/compaction-rungs.md#settings-that-fit-the-window); a combination of
 * the user's that cannot fit is reported, once per daemon in its log and in every answer it shapes.
 */
import type { CompactionReason, CompactionSettings, Settings, SettingsSource } from "@base-context/protocol";
import { fitToWindow, windowSummaryBudget, WINDOW_SIZE_KEYS, type SummaryBudget, type WindowSizes } from "@base-context/core";
import type { z } from "zod";
import { log } from "../log.js";

type Reason = z.infer<typeof CompactionReason>;

/** Where each `section.key` of a settings object came from (`settings/get`'s `sources`). */
export type SettingsSources = Readonly<Record<string, SettingsSource>>;

/** The session's `compaction.*` settings with a request's overrides on top. */
export function effectiveCompactionSettings(settings: Settings, overrides?: Partial<CompactionSettings>): CompactionSettings {
  // Only the declared keys: preparations reach plugins and `compaction/prepare`, and the settings
  // section holds more (`compaction.prune`) that is no part of a preparation.
  const { enabled, reserveTokens, keepRecentTokens } = settings.compaction;
  return {
    enabled: overrides?.enabled ?? enabled,
    reserveTokens: overrides?.reserveTokens ?? reserveTokens,
    keepRecentTokens: overrides?.keepRecentTokens ?? keepRecentTokens,
  };
}

/** The settings a run, a threshold check or a summary uses for one request. */
export interface RequestSettings {
  /** The settings with `compaction.*` (prune included) as they apply to this request. */
  readonly settings: Settings;
  /** `compaction.*`'s declared keys, as a preparation carries them. */
  readonly compaction: CompactionSettings;
  /**
   * With a window: the kept part never holds less than keepRecentTokens (the cut moves back, not
   * forward, and its pruning stops there).
   */
  readonly keepAtLeastBudget: boolean;
  /** With a window: what the whole stored summary may take. */
  readonly summaryBudget?: SummaryBudget;
  /** Why no compacted context can fit the window with the user's sizes (reported, not corrected). */
  readonly conflict?: string;
}

/**
 * The settings for a request: the session's, the request's overrides on top, and, when the client
 * gave its window, every size neither set fitted to its share of the window. `sources` says which
 * keys a settings file set (absent: all of them count as set, as in tests that hand settings over).
 */
export function requestSettings(
  settings: Settings,
  options: {
    sources?: SettingsSources | undefined;
    overrides?: Partial<CompactionSettings> | undefined;
    contextWindow?: number | undefined;
  },
): RequestSettings {
  const compaction = effectiveCompactionSettings(settings, options.overrides);
  const merged: Settings = { ...settings, compaction: { ...settings.compaction, ...compaction } };
  if (options.contextWindow === undefined) return { settings: merged, compaction, keepAtLeastBudget: false };

  const { prune } = settings.compaction;
  const { protectTokens, minTokens, minSavings } = prune;
  const sizes: WindowSizes = { ...compaction, protectTokens, minTokens, minSavings };
  const explicit = new Set<keyof WindowSizes>();
  for (const key of Object.keys(WINDOW_SIZE_KEYS) as (keyof WindowSizes)[]) {
    const setByRequest = (key === "reserveTokens" || key === "keepRecentTokens") && options.overrides?.[key] !== undefined;
    const source = options.sources?.[WINDOW_SIZE_KEYS[key]];
    if (setByRequest || options.sources === undefined || (source !== undefined && source !== "default")) explicit.add(key);
  }
  const fitted = fitToWindow(options.contextWindow, sizes, explicit);
  if (fitted.conflict !== undefined) reportOnce(fitted.conflict);
  const fittedCompaction = { ...compaction, reserveTokens: fitted.reserveTokens, keepRecentTokens: fitted.keepRecentTokens };
  return {
    settings: {
      ...settings,
      compaction: {
        ...fittedCompaction,
        prune: { ...prune, protectTokens: fitted.protectTokens, minTokens: fitted.minTokens, minSavings: fitted.minSavings },
      },
    },
    compaction: fittedCompaction,
    keepAtLeastBudget: true,
    summaryBudget: windowSummaryBudget(options.contextWindow, fitted.reserveTokens),
    ...(fitted.conflict !== undefined ? { conflict: fitted.conflict } : {}),
  };
}

/** Conflicts already written to the log by this daemon (each once: a client sends its window every turn). */
const reported = new Set<string>();
const MAX_REPORTED = 1000;

function reportOnce(conflict: string): void {
  if (reported.has(conflict)) return;
  if (reported.size >= MAX_REPORTED) reported.clear();
  reported.add(conflict);
  log("warn", conflict);
}

/** Why a compaction for `reason` is disabled, or undefined when it may run. */
export function compactionDisabledReason(
  mode: Settings["context"]["mode"],
  compaction: CompactionSettings,
  reason: Reason,
): string | undefined {
  if (mode === "off") return 'compaction is disabled: context.mode is "off"';
  if (reason === "threshold" && !compaction.enabled) return "automatic compaction is disabled: compaction.enabled is false";
  return undefined;
}
