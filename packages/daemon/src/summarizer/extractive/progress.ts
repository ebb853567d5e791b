/** The Done items built from tool calls, and the errors: fixed ones and those still standing. */
import type { Action, ErrorFact, Facts, Noted } from "./facts.js";
import { code, isSleep } from "@base-context/core";
import { latestAndRest, listed, type Scorer } from "./items.js";
import type { Item } from "./render.js";

/**
 * One line per changed file and per command, the most recent ones; older ones, reads, searches
 * and other tools grouped, so a long session does not bury the summary under routine lines.
 */
export function actionItems(facts: Facts, s: Scorer): Item[] {
  const modified = new Map<string, { tools: Map<string, number>; lastIndex: number }>();
  const runs: Noted[] = [];
  const reads: Action[] = [];
  const searches: Action[] = [];
  const others = new Map<string, { count: number; lastIndex: number }>();

  for (const action of facts.actions.values()) {
    switch (action.kind) {
      case "modify": {
        const entry = modified.get(action.target) ?? { tools: new Map<string, number>(), lastIndex: 0 };
        entry.tools.set(action.toolName, (entry.tools.get(action.toolName) ?? 0) + action.count);
        entry.lastIndex = Math.max(entry.lastIndex, action.lastIndex);
        modified.set(action.target, entry);
        break;
      }
      case "run":
        // Failing commands are blockers; they are reported there, not as progress.
        // A `sleep` is waiting, not progress.
        if (action.outcome !== "error" && !isSleep(action.target)) {
          const times = action.count > 1 ? ` ×${action.count}` : "";
          const asDesigned =
            action.exitCode !== undefined && action.exitCode !== 0 ? ` (exit ${action.exitCode}, as designed: not a failure)` : "";
          const result = asDesigned || (action.outcome === "ok" ? (action.exitCode === 0 ? " (exit 0)" : " (ok)") : "");
          runs.push({ text: `Ran ${code(action.target)}${times}${result}`, index: action.lastIndex });
        }
        break;
      case "read":
        reads.push(action);
        break;
      case "search":
        searches.push(action);
        break;
      case "other": {
        const entry = others.get(action.toolName) ?? { count: 0, lastIndex: 0 };
        entry.count += action.count;
        entry.lastIndex = Math.max(entry.lastIndex, action.lastIndex);
        others.set(action.toolName, entry);
        break;
      }
    }
  }

  const items: Item[] = [];
  const changes = [...modified].map(([path, entry]) => {
    const how = [...entry.tools].map(([tool, n]) => (n > 1 ? `${tool} ×${n}` : tool)).join(", ");
    return { text: `Modified ${code(path)} (${how})`, index: entry.lastIndex, path };
  });
  items.push(
    // Every changed file is named: a successor must not lose one (the older ones on one line).
    ...latestAndRest(
      changes,
      10,
      s,
      56,
      (rest) => `Modified ${rest.length} other files earlier: ${rest.map((c) => code(c.path)).join(", ")}`,
    ),
    ...latestAndRest(
      runs,
      6,
      s,
      50,
      (rest) =>
        `Ran ${rest.length} other commands without errors, e.g. ${listed(
          rest.map((r) => r.text.replace(/^Ran /, "")),
          3,
        )}`,
    ),
  );
  if (reads.length > 0) {
    items.push(s.noted({ text: `Read ${reads.map((a) => code(a.target)).join(", ")}`, index: reads[reads.length - 1]!.lastIndex }, 36));
  }
  if (searches.length > 0) {
    const shown = searches.slice(-6).map((a) => (a.target ? code(a.target) : code(a.toolName)));
    items.push(s.noted({ text: `Searched ${shown.join(", ")}`, index: searches[searches.length - 1]!.lastIndex }, 26));
  }
  for (const [tool, entry] of others) {
    items.push(s.noted({ text: `Used ${code(tool)}${entry.count > 1 ? ` ×${entry.count}` : ""}`, index: entry.lastIndex }, 30));
  }
  return items;
}

/** Files shell commands moved or removed: the file lists hold where they are now, Done says what happened. */
export function fileChangeItems(facts: Facts, s: Scorer): Item[] {
  return facts.fileChanges.map((change) =>
    s.noted({ text: change.to !== undefined ? `Moved ${code(change.path)} to ${code(change.to)}` : `Removed ${code(change.path)}`, index: change.index }, 55),
  );
}

/**
 * Failures that were fixed: the latest few, the rest counted; look-ups that failed and the work
 * went on (the agent learned something, nothing was broken) on one line.
 */
export function fixedItems(facts: Facts, s: Scorer): Item[] {
  const lookups = facts.errors.filter((e) => e.resolved && e.lookup && !e.carried);
  const items: Item[] = [];
  if (lookups.length > 0) {
    const last = lookups[lookups.length - 1]!;
    const text = `${lookups.length} look-up${lookups.length === 1 ? "" : "s"} failed and the work went on, e.g. ${listed(
      lookups.slice(-3).map((e) => `${e.what}: ${code(e.message)}`),
      3,
    )}`;
    items.push(s.noted({ text, index: last.resolvedIndex ?? last.index }, 40));
  }
  // The same failure again (the same action, the same line) is told once, by its latest occurrence.
  const latest = new Map<string, ErrorFact>();
  for (const e of facts.errors) if (e.resolved && !e.lookup) latest.set(`${e.what}\u0000${e.message}`, e);
  const fixed = [...latest.values()]
    .map((e) => ({ text: fixedText(e), index: e.resolvedIndex ?? e.index, what: e.what }))
    .sort((a, b) => a.index - b.index);
  // Each error line stays (a successor may meet it again); the oldest beyond the cap are named by command.
  const rest = (older: { what: string }[]) => `${older.length} earlier failures were fixed, e.g. ${listed(older.map((r) => r.what), 3)}`;
  return [...items, ...latestAndRest(fixed, 30, s, 46, rest)];
}

/** "`cmd` (exit 1) failed with `message`, then succeeded"; a blocker an earlier summary listed is its own line already. */
function fixedText(error: ErrorFact): string {
  const how = fixedHow(error);
  return error.carried ? `Earlier blocker ${error.what}: ${how}` : `${error.what} failed with ${code(error.message)}, then ${how}`;
}

function fixedHow(error: ErrorFact): string {
  if (error.resolvedHow === "failed differently") return "failed differently";
  if (error.resolvedHow === "said fixed") return "was fixed";
  if (error.resolvedHow === "work went on") return "the work went on another way";
  if (error.resolvedHow === "written elsewhere") return "the same content was written elsewhere";
  return "succeeded";
}

/** The failures still standing: the latest per action (repeated failures of one command are one blocker). */
export function unresolvedErrors(facts: Facts): ErrorFact[] {
  return facts.standingErrors;
}
