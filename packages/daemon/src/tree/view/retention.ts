/** The retention report a summary entry carries (docs/retention.md), read back from its `details`. */
import { RetentionReport, type RetentionReport as Report } from "@base-context/protocol";

/** The report stored on a summary entry (`details.retention`), when it has a valid one. */
export function retentionOf(details: unknown): Report | undefined {
  if (typeof details !== "object" || details === null) return undefined;
  const parsed = RetentionReport.safeParse((details as { retention?: unknown }).retention);
  return parsed.success ? parsed.data : undefined;
}
