/**
 * What "Import All Sessions of an Agent" says, from the JSON report of `base-context import --all
 * <agent> --json`: how many session files, imported, brought up to date or unchanged, the entries
 * added, and each file that failed.
 */
import { plural } from "./format.js";

export interface ImportAllReport {
  folder: string;
  files: (
    | { path: string; sessionId: string; updated: boolean; addedEntries: number; entryCount: number; skippedLines: number }
    | { path: string; error: string }
  )[];
}

export interface ImportAllOutcome {
  level: "info" | "warning";
  message: string;
  /** "<file>: <why>", for the log. */
  failures: string[];
}

/** The report, when `stdout` is one (the command writes it even when a file failed). */
export function parseImportAllReport(stdout: string): ImportAllReport | undefined {
  try {
    const report = JSON.parse(stdout) as Partial<ImportAllReport>;
    return typeof report.folder === "string" && Array.isArray(report.files) ? (report as ImportAllReport) : undefined;
  } catch {
    return undefined;
  }
}

export function importAllOutcome(agentName: string, report: ImportAllReport): ImportAllOutcome {
  const failures = report.files.flatMap((file) => ("error" in file ? [`${file.path}: ${file.error}`] : []));
  const done = report.files.flatMap((file) => ("error" in file ? [] : [file]));
  const imported = done.filter((file) => !file.updated).length;
  const updated = done.filter((file) => file.updated && file.addedEntries > 0).length;
  const unchanged = done.filter((file) => file.updated && file.addedEntries === 0).length;
  const added = done.reduce((sum, file) => sum + file.addedEntries, 0);
  const failed = failures.length > 0 ? `, ${failures.length} failed (see the log)` : "";
  return {
    level: failures.length > 0 ? "warning" : "info",
    message:
      `${plural(report.files.length, `${agentName} session file`)} in ${report.folder}: ${imported} imported, ${updated} brought up to date, ` +
      `${unchanged} unchanged${failed}; ${plural(added, "entry", "entries")} added.`,
    failures,
  };
}
