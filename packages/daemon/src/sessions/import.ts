/**
 * `session/import` of pi JSONL: lines are read one at a time, migrated and validated, and written
 * in one transaction per batch, in file order. Entries are stored without token counts: counting
 * every entry of a 300 MB file would take longer than the rest of the import together. The counts
 * are filled in afterwards (TokenBackfill, newest first, in the background), and whoever reads a
 * count that is still missing computes it then (TokenLedger), so every count a reader gets is exact.
 * The session stays invisible until the last batch; any failure deletes what was written.
 */
import { AppError } from "../errors.js";
import type { IdSource } from "../ids.js";
import { log } from "../log.js";
import { timeMs, type ImportedEntry, type ImportTarget, type SessionRecord, type SessionStore } from "../store/index.js";
import { fileLines, stringLines } from "./line-source.js";
import { PiLineParser } from "./pi-line-parser.js";

export interface ImportSource {
  path?: string | undefined;
  content?: string | undefined;
  /** Overrides the header's cwd. */
  cwd?: string | undefined;
  /** A fresh session id instead of the header's. */
  newId?: boolean | undefined;
}

export interface SkippedLine {
  line: number;
  reason: string;
}

export interface ImportResult {
  session: SessionRecord;
  entryCount: number;
  skippedLines: SkippedLine[];
}

export interface ImportOptions {
  /** Entries per write transaction. */
  batchSize?: number;
}

/** A garbage file could have millions of bad lines; the reply lists this many and summarizes the rest. */
const MAX_REPORTED_SKIPS = 1000;

export class PiImporter {
  private readonly batchSize: number;

  constructor(
    private readonly store: SessionStore,
    private readonly ids: IdSource,
    options: ImportOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 1000;
  }

  async import(source: ImportSource): Promise<ImportResult> {
    const parser = new PiLineParser(this.ids);
    const skipped: SkippedLine[] = [];
    let skippedCount = 0;
    let rerooted = 0;
    let firstRerootedLine = 0;
    let batch: ImportedEntry[] = [];
    let target: ImportTarget | undefined;
    let lineNumber = 0;

    const writeBatch = () => {
      const report = target!.insertBatch(batch);
      batch = [];
      for (const skip of report.skipped) addSkip(skip);
      if (rerooted === 0 && report.rerooted.length > 0) firstRerootedLine = report.rerooted[0]!;
      rerooted += report.rerooted.length;
    };
    const addSkip = (skip: SkippedLine) => {
      if (skippedCount++ < MAX_REPORTED_SKIPS) skipped.push(skip);
    };

    try {
      for await (const text of source.path !== undefined ? fileLines(source.path) : stringLines(source.content ?? "")) {
        lineNumber++;
        const parsed = parser.parse(text, lineNumber);
        if (parsed.kind === "header") {
          const { header } = parsed;
          const createdAt = header.createdAt ?? this.ids.now();
          const createdMs = Date.parse(createdAt);
          target = this.store.beginImport({
            id: source.newId ? this.ids.sessionId() : header.id,
            cwd: source.cwd ?? header.cwd ?? "",
            createdAt,
            parentSession: header.parentSession,
            headerExtra: header.extra,
            modifiedMs: Number.isNaN(createdMs) ? timeMs(this.ids.now()) : createdMs,
          });
        } else if (parsed.kind === "entry") {
          batch.push({ line: lineNumber, entry: parsed.entry, json: parsed.json, tokens: null });
          if (batch.length >= this.batchSize) writeBatch();
        } else if (parsed.kind === "skip") {
          addSkip({ line: lineNumber, reason: parsed.reason });
        }
      }
      if (!target) throw new AppError("import_failed", "the file is empty: a pi session starts with a header line");
      if (batch.length > 0) writeBatch();
      const session = target.finish();
      if (skippedCount > MAX_REPORTED_SKIPS) {
        skipped.push({ line: lineNumber, reason: `${skippedCount - MAX_REPORTED_SKIPS} more skipped lines are not listed` });
      }
      if (rerooted > 0) {
        log("warn", `import of session "${session.id}": ${rerooted} entries named a parent that is not an earlier line and became roots (first at line ${firstRerootedLine})`);
      }
      skipped.sort((a, b) => a.line - b.line);
      return { session, entryCount: session.entryCount, skippedLines: skipped };
    } catch (error) {
      // Nothing half-imported may remain.
      try {
        target?.abort();
      } catch (abortError) {
        log("error", `could not remove the partial import of "${target?.sessionId}": ${(abortError as Error).message}`);
      }
      throw importFailure(error, lineNumber, source.path);
    }
  }
}

function importFailure(error: unknown, lineNumber: number, path: string | undefined): AppError {
  if (error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (lineNumber === 0 && path !== undefined) return new AppError("import_failed", `cannot read ${path}: ${message}`, { path });
  return new AppError("import_failed", `import failed near line ${lineNumber}: ${message}`, { line: lineNumber });
}
