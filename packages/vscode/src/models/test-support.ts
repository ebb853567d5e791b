/** Retention reports for the models' tests: kept/total per kind, and the items lost. */
import type { RetentionReport } from "@base-context/protocol";
import { PROBE_KINDS } from "@base-context/core";

type Kind = (typeof PROBE_KINDS)[number];

export function report(
  counts: Partial<Record<Kind, [kept: number, total: number]>>,
  missing: Partial<Record<Kind, string[]>> = {},
): RetentionReport {
  const out = { missing: { files: [], errors: [], requests: [], constraints: [], plan: [], ...missing } } as unknown as RetentionReport;
  for (const kind of PROBE_KINDS) {
    const [kept, total] = counts[kind] ?? [0, 0];
    (out as Record<Kind, { kept: number; total: number }>)[kind] = { kept, total };
  }
  return out;
}
