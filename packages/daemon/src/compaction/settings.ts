/**
 * Which settings a compaction runs with, and when it must not run
 * (docs/design.md#when-compaction-is-off): `context.mode: "off"` turns off all context optimization, manual `/compact`
 * included; `compaction.enabled: false` only turns off the automatic threshold compaction.
 */
import type { CompactionReason, CompactionSettings, Settings } from "@base-context/protocol";
import type { z } from "zod";

type Reason = z.infer<typeof CompactionReason>;

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
