/**
 * `base-context doctor`'s compaction check: whether the compaction sizes fit the model's window
 * (docs/compaction-rungs.md#settings-that-fit-the-window). Sizes left unset follow their share of
 * each client's window and always fit; sizes the user set are checked against the window
 * given with `--context-window`, else the smallest window they fit is said.
 */
import type { Settings, SettingsSource } from "@base-context/protocol";
import { fitToWindow, thousands, WINDOW_SIZE_KEYS, type WindowSizes } from "@base-context/core";
import type { CheckResult } from "./doctor-checks.js";

export function checkCompactionWindow(
  settings: Settings,
  sources: Readonly<Record<string, SettingsSource>>,
  contextWindow: number | undefined,
): CheckResult {
  const { reserveTokens, keepRecentTokens, prune } = settings.compaction;
  const sizes: WindowSizes = { reserveTokens, keepRecentTokens, ...prune };
  const explicit = new Set(
    (Object.keys(WINDOW_SIZE_KEYS) as (keyof WindowSizes)[]).filter((key) => (sources[WINDOW_SIZE_KEYS[key]] ?? "default") !== "default"),
  );
  const setIn = (key: "reserveTokens" | "keepRecentTokens") => (explicit.has(key) ? `, set in ${sources[WINDOW_SIZE_KEYS[key]]} settings` : "");
  const describeSize = (name: string, key: "reserveTokens" | "keepRecentTokens") =>
    explicit.has(key) ? `${name} ${thousands(sizes[key])}${setIn(key)}` : `${name} left unset (${key === "reserveTokens" ? "a quarter of the window at most" : "a quarter of the window"})`;
  if (contextWindow !== undefined) {
    const fitted = fitToWindow(contextWindow, sizes, explicit);
    const applied =
      `with a ${thousands(contextWindow)}-token window: compacts above ${thousands(contextWindow - fitted.reserveTokens)} tokens ` +
      `(reserve ${thousands(fitted.reserveTokens)}${setIn("reserveTokens")}) and keeps at least ${thousands(fitted.keepRecentTokens)}` +
      setIn("keepRecentTokens");
    if (fitted.conflict === undefined) return { name: "compaction", status: "ok", summary: applied, fixes: [] };
    return { name: "compaction", status: "warn", summary: `${applied}: ${fitted.conflict}`, fixes: [] };
  }
  if (!explicit.has("reserveTokens") && !explicit.has("keepRecentTokens")) {
    return {
      name: "compaction",
      status: "ok",
      summary: "reserve and kept part left unset: the reserve is capped at a quarter of the window a client gives, the kept part is a quarter of it (--context-window n to see one)",
      fixes: [],
    };
  }
  return {
    name: "compaction",
    status: "ok",
    summary:
      `${describeSize("reserve", "reserveTokens")}; ${describeSize("kept part", "keepRecentTokens")}: ` +
      `they fit windows of ${thousands(smallestFittingWindow(sizes, explicit))} tokens or more; clients with smaller ones are told they cannot fit`,
    fixes: ["base-context doctor --context-window n checks a model's window"],
  };
}

/** The smallest window the sizes fit (the sizes left unset grow with the window, at most a quarter of it each). */
function smallestFittingWindow(sizes: WindowSizes, explicit: ReadonlySet<keyof WindowSizes>): number {
  let low = 1;
  let high = sizes.reserveTokens + sizes.keepRecentTokens + 1;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (fitToWindow(middle, sizes, explicit).conflict === undefined) high = middle;
    else low = middle + 1;
  }
  return low;
}
