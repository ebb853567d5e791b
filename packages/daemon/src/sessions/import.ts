/**
 * `session/import`: which format a file is (given, or detected from its first lines), then one
 * import run (import-run.ts) that reads it into the store. Entries are stored without token
 * counts: counting every entry of a 300 MB file would take longer than the rest of the import
 * together. The counts are filled in afterwards (TokenBackfill, newest first, in the background),
 * and whoever reads a count that is still missing computes it then (TokenLedger), so every count a
 * reader gets is exact.
 */
import { AppError } from "../errors.js";
import type { IdSource } from "../ids.js";
import type { SessionStore } from "../store/index.js";
import type { FileLimits } from "./line-source.js";
import { firstLines } from "./formats/detect.js";
import type { SessionFormat } from "./formats/format.js";
import { detectFormat, knownFormatNames, sessionFormat } from "./formats/registry.js";
import { piFormat } from "./formats/pi/format.js";
import { importFailure, ImportRun, type ImportResult, type ImportSource } from "./import-run.js";

export interface ImportLimits {
  maxImportLineBytes: number;
  maxImportFileBytes: number;
}

export interface ImportOptions {
  /** Entries per write transaction. */
  batchSize?: number;
  /** The limits on files to import, read at each import (the settings may change). */
  limits?: () => ImportLimits;
  /** The largest entry imported, in bytes of its JSON (`limits.maxEntryBytes`); a larger one is a skipped line. */
  maxEntryBytes?: () => number;
}

export class SessionImporter {
  constructor(
    private readonly store: SessionStore,
    private readonly ids: IdSource,
    private readonly options: ImportOptions = {},
  ) {}

  /** `signal` (the request's cancellation) is honoured between chunks and batches: what was written is removed. */
  async import(source: ImportSource, signal?: AbortSignal): Promise<ImportResult> {
    const limits = this.options.limits?.();
    const fileLimits: FileLimits | undefined = limits && {
      maxLineBytes: limits.maxImportLineBytes,
      maxFileBytes: limits.maxImportFileBytes,
      signal,
    };
    let format: SessionFormat;
    /** No format given and none recognised: read as pi's (the default), and say what else it could have been. */
    let guessed = false;
    if (source.format !== undefined) format = sessionFormat(source.format);
    else {
      let detected: SessionFormat | undefined;
      try {
        detected = detectFormat(await firstLines(source, fileLimits));
      } catch (error) {
        throw importFailure(error, 0, source.path);
      }
      guessed = detected === undefined;
      format = detected ?? piFormat;
    }
    try {
      const run = new ImportRun(this.store, this.ids, format, source, {
        batchSize: this.options.batchSize ?? 1000,
        maxEntryBytes: this.options.maxEntryBytes,
      });
      return await run.run(fileLimits, signal);
    } catch (error) {
      if (guessed && error instanceof AppError && error.code === "import_failed" && !("path" in error.data)) {
        throw new AppError("import_failed", `${error.message}; nor is it another format this build reads (${otherFormats()})`, error.data);
      }
      throw error;
    }
  }
}

/** The formats other than pi's, for the error about a file that is none of them. */
function otherFormats(): string {
  return knownFormatNames().filter((name) => name !== "pi-jsonl").join(", ");
}
