/**
 * Settings that fit the model's window (docs/compaction-rungs.md#settings-that-fit-the-window).
 *
 * The defaults are absolute token counts made for 128k–200k models. When a client gives its
 * model's window, every size the user did not set is capped at a share of that window, so that a
 * compacted context sits well inside it and the next turns fit before the next compaction:
 *
 *   threshold = window − reserve;  after a compaction, context = summary + kept part, where
 *   kept ≥ keepRecentTokens (the cut never keeps less with a window) and the summary is written to
 *   at most 0.8 × reserve. With the shares below, summary + kept ≤ 0.45 of the window plus one
 *   message, under a threshold of 0.75 of it.
 *
 * A size the user set (a settings file, or the request's overrides) is kept as it is. When reserve
 * and kept part alone take the whole window, no compacted context can fit it: that is reported
 * (`conflict`), never silently corrected.
 */
import { thousands } from "./prune.js";

/** The sizes a window caps, as the settings name them. */
export interface WindowSizes {
  readonly reserveTokens: number;
  readonly keepRecentTokens: number;
  /** `compaction.prune.*` */
  readonly protectTokens: number;
  readonly minTokens: number;
  readonly minSavings: number;
}

/** The share of the window each size is capped at when the user did not set it. */
export const WINDOW_SHARES: Readonly<Record<keyof WindowSizes, number>> = {
  reserveTokens: 1 / 4,
  keepRecentTokens: 1 / 4,
  protectTokens: 1 / 5,
  minSavings: 1 / 10,
  minTokens: 1 / 16,
};

/** The settings keys of the sizes (as `settings/get`'s `sources` name them). */
export const WINDOW_SIZE_KEYS: Readonly<Record<keyof WindowSizes, string>> = {
  reserveTokens: "compaction.reserveTokens",
  keepRecentTokens: "compaction.keepRecentTokens",
  protectTokens: "compaction.prune.protectTokens",
  minTokens: "compaction.prune.minTokens",
  minSavings: "compaction.prune.minSavings",
};

export interface FittedSizes extends WindowSizes {
  /** The sizes lowered to their share of the window. */
  readonly derived: readonly (keyof WindowSizes)[];
  /** Why no compacted context can fit this window with these sizes (reserve + kept part ≥ window). */
  readonly conflict?: string;
}

/**
 * The sizes for a window: each one the user did not set (`explicit` holds those they did) is
 * `min(its value, ⌊share × window⌋)`; set ones are kept. `conflict` when reserve + kept ≥ window.
 */
export function fitToWindow(contextWindow: number, sizes: WindowSizes, explicit: ReadonlySet<keyof WindowSizes>): FittedSizes {
  const fitted = { ...sizes } as { -readonly [K in keyof WindowSizes]: number };
  const derived: (keyof WindowSizes)[] = [];
  for (const key of Object.keys(WINDOW_SHARES) as (keyof WindowSizes)[]) {
    if (explicit.has(key)) continue;
    const cap = Math.floor(contextWindow * WINDOW_SHARES[key]);
    if (cap < sizes[key]) {
      fitted[key] = cap;
      derived.push(key);
    }
  }
  const conflict = windowConflict(contextWindow, fitted, explicit);
  return { ...fitted, derived, ...(conflict !== undefined ? { conflict } : {}) };
}

/** The words of a reserve + kept part that leave no room in the window, naming which of them the user set. */
function windowConflict(contextWindow: number, sizes: WindowSizes, explicit: ReadonlySet<keyof WindowSizes>): string | undefined {
  const { reserveTokens, keepRecentTokens } = sizes;
  if (reserveTokens + keepRecentTokens < contextWindow) return undefined;
  const set = (["reserveTokens", "keepRecentTokens"] as const).filter((key) => explicit.has(key)).map((key) => WINDOW_SIZE_KEYS[key]);
  const lower = set.length === 1 ? `Lower ${set[0]} (set by you), or leave it unset: it is then` : "Lower them, or leave them unset: each is then";
  return (
    `the compaction settings cannot fit the model's window (${thousands(contextWindow)} tokens): compaction.reserveTokens ` +
    `${thousands(reserveTokens)} + compaction.keepRecentTokens ${thousands(keepRecentTokens)} = ${thousands(reserveTokens + keepRecentTokens)}, ` +
    `so a compacted context is still over the threshold. ${lower} capped at a quarter of the window.`
  );
}
