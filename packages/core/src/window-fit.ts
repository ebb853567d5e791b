/**
 * Settings that fit the model's window (docs/compaction-rungs.md#settings-that-fit-the-window).
 *
 * The defaults are absolute token counts made for 128k–200k models. When a client gives its
 * model's window W, every size the user did not set follows that window:
 *
 *   reserve  = min(16,384, W/4)   threshold = W − reserve ≥ 0.75 W
 *   kept     = W/4                the least a compaction leaves (kept part, pruning never under it)
 *   room     = W/4                a compaction leaves the context this far under the threshold
 *   summary  ≤ 0.8 × reserve      so summary + kept part ≤ 0.45 W, and the turns after it have ≥ 0.3 W
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

/** The share of the window each size follows when the user did not set it. */
export const WINDOW_SHARES: Readonly<Record<keyof WindowSizes, number>> = {
  reserveTokens: 1 / 4,
  keepRecentTokens: 1 / 4,
  protectTokens: 1 / 5,
  minSavings: 1 / 4,
  minTokens: 1 / 16,
};

/**
 * The sizes that are their share of the window whatever their default, above it too: the kept
 * part, the least a compaction leaves (the 20,000 default would leave a 200k model a tenth of its
 * window), and the room a compaction leaves under the threshold. The others are capped at their share.
 */
export const FOLLOWS_WINDOW: ReadonlySet<keyof WindowSizes> = new Set(["keepRecentTokens", "minSavings"]);

/** The settings keys of the sizes (as `settings/get`'s `sources` name them). */
export const WINDOW_SIZE_KEYS: Readonly<Record<keyof WindowSizes, string>> = {
  reserveTokens: "compaction.reserveTokens",
  keepRecentTokens: "compaction.keepRecentTokens",
  protectTokens: "compaction.prune.protectTokens",
  minTokens: "compaction.prune.minTokens",
  minSavings: "compaction.prune.minSavings",
};

export interface FittedSizes extends WindowSizes {
  /** The sizes changed to their share of the window. */
  readonly derived: readonly (keyof WindowSizes)[];
  /** Why no compacted context can fit this window with these sizes (reserve + kept part ≥ window). */
  readonly conflict?: string;
}

/**
 * The sizes for a window: each one the user did not set (`explicit` holds those they did) is
 * `min(its value, ⌊share × window⌋)`, or `⌊share × window⌋` for those that follow the window; set
 * ones are kept. `conflict` when reserve + kept ≥ window.
 */
export function fitToWindow(contextWindow: number, sizes: WindowSizes, explicit: ReadonlySet<keyof WindowSizes>): FittedSizes {
  const fitted = { ...sizes } as { -readonly [K in keyof WindowSizes]: number };
  const derived: (keyof WindowSizes)[] = [];
  for (const key of Object.keys(WINDOW_SHARES) as (keyof WindowSizes)[]) {
    if (explicit.has(key)) continue;
    const share = Math.floor(contextWindow * WINDOW_SHARES[key]);
    const size = FOLLOWS_WINDOW.has(key) ? share : Math.min(sizes[key], share);
    if (size !== sizes[key]) {
      fitted[key] = size;
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
  const unset = { reserveTokens: "capped at a quarter of the window", keepRecentTokens: "a quarter of the window" };
  const lower =
    set.length === 1
      ? `Lower ${set[0]} (set by you), or leave it unset: it is then ${set[0] === WINDOW_SIZE_KEYS.reserveTokens ? unset.reserveTokens : unset.keepRecentTokens}.`
      : "Lower them, or leave them unset: the reserve is then capped at a quarter of the window, the kept part a quarter of it.";
  return (
    `the compaction settings cannot fit the model's window (${thousands(contextWindow)} tokens): compaction.reserveTokens ` +
    `${thousands(reserveTokens)} + compaction.keepRecentTokens ${thousands(keepRecentTokens)} = ${thousands(reserveTokens + keepRecentTokens)}, ` +
    `so a compacted context is still over the threshold. ${lower}`
  );
}
