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
import { importFailure, ImportedBeside, ImportRun, type ImportResult, type ImportSource } from "./import-run.js";
import type { ImportStates } from "./import-state.js";

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
  /** Where the imports of files stopped, so the next import of a file reads only what is new in it. */
  states?: ImportStates;
}

export class SessionImporter {
  constructor(
    private readonly store: SessionStore,
    private readonly ids: IdSource,
    private readonly options: ImportOptions = {},
  ) {}

  /**
   * `signal` (the request's cancellation) is honoured between chunks and batches: what was written
   * is removed, or, with `keepWhatIsRead`, kept and the place saved for the next import.
   */
  async import(source: ImportSource, signal?: AbortSignal, options: { keepWhatIsRead?: boolean } = {}): Promise<ImportResult> {
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
      return await this.run(format, source, fileLimits, signal, options.keepWhatIsRead === true);
    } catch (error) {
      if (guessed && error instanceof AppError && error.code === "import_failed" && !("path" in error.data)) {
        throw new AppError("import_failed", `${error.message}; nor is it another format this build reads (${otherFormats()})`, error.data);
      }
      throw error;
    }
  }

  /**
   * One run; when another process is importing the same session for the first time (Claude Code
   * starts its hooks at once), waits until it has finished or given up, then runs again: it then
   * adds what is new, or imports the session itself.
   */
  private async run(
    format: SessionFormat,
    source: ImportSource,
    fileLimits: FileLimits | undefined,
    signal: AbortSignal | undefined,
    keepWhatIsRead: boolean,
  ): Promise<ImportResult> {
    for (let attempt = 1; ; attempt++) {
      const run = new ImportRun(this.store, this.ids, format, source, {
        batchSize: this.options.batchSize ?? 1000,
        maxEntryBytes: this.options.maxEntryBytes,
        states: this.options.states,
        keepWhatIsRead,
      });
      try {
        return await run.run(fileLimits, signal);
      } catch (error) {
        // Another import in the way more than a few times running is not a hook's burst: said as the clash it is.
        if (!(error instanceof ImportedBeside)) throw error;
        if (attempt >= MAX_ATTEMPTS) throw new AppError("session_exists", `${error.message}, again after ${attempt} attempts`, { sessionId: error.sessionId });
        while (this.store.importInProgress(error.sessionId)) await pause(POLL_MS, signal);
      }
    }
  }
}

/** Polls for the end of another process's first import of a session (every POLL_MS). */
const POLL_MS = 50;
/** Runs of one import that find another import of the same session in the way, at most. */
const MAX_ATTEMPTS = 5;

/** Milliseconds to wait between polls. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** The formats other than pi's, for the error about a file that is none of them. */
function otherFormats(): string {
  return knownFormatNames().filter((name) => name !== "pi-jsonl").join(", ");
}
