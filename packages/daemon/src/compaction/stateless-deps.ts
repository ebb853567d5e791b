/** What the stateless summaries (`summarize/compaction`, `summarize/branch`) need from the daemon. */
import type { RetentionReport, Settings, SettingsSource, SummarizeProgress, SummarizeResult } from "@base-context/protocol";
import { detailsWithRetention } from "@base-context/core";
import type { ClientModel, Summarizer } from "../summarizer/index.js";

export interface StatelessDeps {
  /** The effective settings of a project (only the global ones when it is undefined). */
  settingsFor(projectDir: string | undefined): Settings;
  /** Where each `section.key` of those settings came from (absent: every key counts as set). */
  sourcesFor?(projectDir: string | undefined): Readonly<Record<string, SettingsSource>>;
  /** The summarizer (and its fallback chain) for these settings and the asking client's model. */
  summarizerFor(settings: Settings["summarizer"], clientModel: ClientModel | undefined): Summarizer;
}

/** The request being served: who asks, and how it is cancelled and followed. */
export interface StatelessRequest {
  /** The `projectDir` the client gave at `initialize` (params may name another). */
  readonly projectDir?: string | undefined;
  readonly clientModel?: ClientModel | undefined;
  /** `$/cancelRequest`: CancelledError, nothing returned. */
  readonly signal?: AbortSignal | undefined;
  /** `$/progress` for the request's `workDoneToken`. */
  readonly progress?: ((value: SummarizeProgress) => void) | undefined;
}

/** What a stateless summary produced, before its retention check. */
export interface StatelessProduced {
  details: unknown;
  summarizer: string;
  message: string;
  pluginId?: string | undefined;
}

/**
 * The `summarized` result of either stateless method: the summary as retained (repaired and capped,
 * like a stored one) and its report, also carried in `details.retention`.
 */
export function summarizedResult(produced: StatelessProduced, retained: { summary: string; retention: RetentionReport }): SummarizeResult {
  return {
    status: "summarized",
    summary: retained.summary,
    details: detailsWithRetention(produced.details, retained.retention),
    summarizer: produced.summarizer,
    retention: retained.retention,
    message: produced.message,
    ...(produced.pluginId !== undefined ? { pluginId: produced.pluginId } : {}),
  };
}
