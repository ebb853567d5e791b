/**
 * The retention report of a summary entry, for people: "kept 41/41 files, 6/7 errors, …" and
 * what was lost (docs/retention.md). Shared by `compact`, `navigate --summarize` and `show`.
 */
import type { RetentionReport as Report } from "@base-context/protocol";
import { formatRetention, PROBE_KINDS } from "@base-context/core";

export { retentionOf } from "../tree/view/retention.js";

export function retentionLine(report: Report): string {
  return formatRetention(report);
}

const SINGULAR: Record<(typeof PROBE_KINDS)[number], string> = {
  files: "file",
  errors: "error",
  requests: "request",
  constraints: "constraint",
  plan: "plan",
};
const SHOWN = 3;

/** The first few items the summary lost, e.g. `error "TypeError: …"; request "Add …"` (+ how many more). */
export function lostLine(report: Report): string | undefined {
  const lost = PROBE_KINDS.flatMap((kind) =>
    report.missing[kind].map((text) => `${SINGULAR[kind]} "${text.length > 70 ? `${text.slice(0, 69)}…` : text}"`),
  );
  const total = PROBE_KINDS.reduce((sum, kind) => sum + report[kind].total - report[kind].kept, 0);
  if (total === 0) return undefined;
  const more = total - Math.min(SHOWN, lost.length);
  return `${lost.slice(0, SHOWN).join("; ")}${more > 0 ? ` (+${more} more, see --json)` : ""}`;
}
