/**
 * `session/import`: lines are read one at a time, turned into entries by the file's format
 * (formats/registry.ts: pi's JSONL, Claude Code's transcripts…), and written in one transaction
 * per batch, in file order. Entries are stored without token counts: counting
 * every entry of a 300 MB file would take longer than the rest of the import together. The counts
 * are filled in afterwards (TokenBackfill, newest first, in the background), and whoever reads a
 * count that is still missing computes it then (TokenLedger), so every count a reader gets is exact.
 * The session stays invisible until the last batch; any failure deletes what was written.
 *
 * Formats whose entries keep the file's own ids (`incremental`) import a file of a session that is
 * already here by appending what is new: stored entries are recognised by their ids and passed over.
 */
import type { CompactionEntry, ImportFormat, SessionEntry } from "@base-context/protocol";
import { checkRetention, contextProbes, detailsWithRetention } from "@base-context/core";
import { AppError, CancelledError } from "../errors.js";
import type { IdSource } from "../ids.js";
import { log } from "../log.js";
import { jsonBytes } from "./entry-size.js";
import { timeMs, type ImportBatchReport, type ImportedEntry, type ImportTarget, type SessionRecord, type SessionStore } from "../store/index.js";
import { fileLines, stringLines, type FileLimits } from "./line-source.js";
import { firstLines } from "./formats/detect.js";
import type { ParsedLine, SessionFormat } from "./formats/format.js";
import { detectFormat, knownFormatNames, sessionFormat } from "./formats/registry.js";
import { piFormat } from "./formats/pi/format.js";
import { ImportGaps, type SkippedLine } from "./import-gaps.js";

export interface ImportSource {
  /** Undefined: detected from the first lines (pi's when none matches). */
  format?: ImportFormat | undefined;
  path?: string | undefined;
  content?: string | undefined;
  /** Overrides the header's cwd. */
  cwd?: string | undefined;
  /** A fresh session id instead of the header's. */
  newId?: boolean | undefined;
}

export interface ImportResult {
  session: SessionRecord;
  entryCount: number;
  skippedLines: SkippedLine[];
  format: ImportFormat;
  /** Entries this import stored (on a re-import, the new ones only). */
  addedEntries: number;
  /** The session was here already: what was new in the file was appended. */
  updated: boolean;
  /** Lines skipped on purpose because the format holds them beside the conversation, by type. */
  ignoredLines: Record<string, number>;
}

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

/** A garbage file could have millions of bad lines; the reply lists this many and summarizes the rest. */
const MAX_REPORTED_SKIPS = 1000;

export class SessionImporter {
  private readonly batchSize: number;
  private readonly limits: (() => ImportLimits) | undefined;

  constructor(
    private readonly store: SessionStore,
    private readonly ids: IdSource,
    options: ImportOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 1000;
    this.limits = options.limits;
    this.maxEntryBytes = options.maxEntryBytes;
  }

  private readonly maxEntryBytes: (() => number) | undefined;

  /** The same limit as on append (entry-size.ts): the line's own bytes when it is stored as is. */
  private tooLarge(entry: string | SessionEntry): boolean {
    if (this.maxEntryBytes === undefined) return false;
    const limit = this.maxEntryBytes();
    return (typeof entry === "string" ? Buffer.byteLength(entry, "utf8") : jsonBytes(entry, limit)) > limit;
  }

  /** `stored`: the session's ids, read once when a re-import begins and kept up to date (not one query per line). */
  private storedBefore(stored: ReadonlySet<string>, batchIds: ReadonlySet<string>, id: string): boolean {
    return batchIds.has(id) || stored.has(id);
  }

  /** `signal` (the request's cancellation) is honoured between chunks and batches: what was written is removed. */
  async import(source: ImportSource, signal?: AbortSignal): Promise<ImportResult> {
    const limits = this.limits?.();
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
      return await this.importAs(format, source, fileLimits, signal);
    } catch (error) {
      if (guessed && error instanceof AppError && error.code === "import_failed" && !("path" in error.data)) {
        throw new AppError("import_failed", `${error.message}; nor is it another format this build reads (${otherFormats()})`, error.data);
      }
      throw error;
    }
  }

  private async importAs(
    format: SessionFormat,
    source: ImportSource,
    fileLimits: FileLimits | undefined,
    signal?: AbortSignal,
  ): Promise<ImportResult> {
    const parser = format.createParser(this.ids);
    const ignoredLines: Record<string, number> = {};
    let resumed = false;
    let added = 0;
    const skipped: SkippedLine[] = [];
    let skippedCount = 0;
    let rerooted = 0;
    let firstRerootedLine = 0;
    /** Rerooted entries, to tell afterwards which parents came later in the file (cycles). */
    const rerootedEntries: { line: number; id: string; parentId: string }[] = [];
    /** Lines before the header that were not JSON (pi skips them; the first one explains a refusal). */
    let firstUnreadable: SkippedLine | undefined;
    let nonBlankLines = 0;
    let batch: ImportedEntry[] = [];
    /** Ids in `batch` (not yet stored): a refused line with the id of a kept entry must not redirect its children. */
    const batchIds = new Set<string>();
    const orphans = new SkippedParents();
    const gaps = new ImportGaps();
    /** The last entry read (stored now or before): where the history goes on over an unreadable line. */
    let lastEntryId: string | null = null;
    let target: ImportTarget | undefined;
    /** On a re-import: the ids stored (read once, then added to as batches are written). */
    let stored: Set<string> = new Set();
    let lineNumber = 0;

    /**
     * The batch sent whose commit has not been taken yet (ImportTarget.insertBatchAsync): the file
     * is read on while the server writes it, and the next batch is sent once it has committed.
     * Not earlier: two batches in flight would reach the server on two connections, whichever
     * first, and the entries' order (`seq`) must be the file's.
     */
    let committing: { written: number; report: Promise<ImportBatchReport> } | undefined;
    /** Waits for the batch sent and takes its report. */
    const settle = async () => {
      if (!committing) return;
      const { written, report: answer } = committing;
      committing = undefined;
      const report = await answer;
      added += written - report.skipped.length;
      for (const skip of report.skipped) addSkip(skip);
      if (rerooted === 0 && report.rerooted.length > 0) firstRerootedLine = report.rerooted[0]!.line;
      rerooted += report.rerooted.length;
      for (const entry of report.rerooted) if (rerootedEntries.length < MAX_REPORTED_SKIPS) rerootedEntries.push(entry);
    };
    /** Waits for the batch before it, then sends the batch. */
    const writeBatch = async () => {
      signal?.throwIfAborted();
      await settle();
      const report = target!.insertBatchAsync(batch);
      // Its failure is taken by settle(); until then it must not count as unhandled.
      report.catch(() => {});
      committing = { written: batch.length, report };
      if (resumed) for (const { entry } of batch) stored.add(entry.id);
      batch = [];
      batchIds.clear();
    };
    const addSkip = (skip: SkippedLine) => {
      if (skippedCount++ < MAX_REPORTED_SKIPS) skipped.push(skip);
    };
    /** A well-formed entry that is not stored: its children will hang under its nearest kept ancestor. */
    const skipEntry = async (skip: SkippedLine, id: string | undefined, parentId: string | null | undefined) => {
      addSkip(skip);
      if (id === undefined || parentId === undefined || batchIds.has(id)) return;
      await settle(); // what was sent is then stored, and seen
      if (this.store.hasEntry(target!.sessionId, id)) return;
      orphans.add(id, parentId, skip);
    };

    /** Whether `id` is an entry of this file read before (in the batch, stored now or by an earlier import). */
    const known = async (id: string) => {
      if (id === lastEntryId || batchIds.has(id) || stored.has(id)) return true;
      await settle(); // what was sent is then stored, and seen
      return this.store.hasEntry(target!.sessionId, id);
    };
    /** The parent an entry read after an unreadable line gets: the history bridged over the gap. */
    const bridged = async (parentId: string | null): Promise<string | null> => {
      if (parentId === null || !gaps.open || (await known(parentId))) return parentId;
      const bridge = gaps.parentFor(parentId, lineNumber);
      return bridge === undefined ? parentId : bridge;
    };

    const handle = async (parsed: ParsedLine) => {
      if (!target && parsed.kind === "skip") firstUnreadable ??= { line: lineNumber, reason: parsed.reason };
      if (parsed.kind === "header") {
        const { header } = parsed;
        const id = source.newId ? this.ids.sessionId() : header.id;
        if (format.incremental && this.store.getSession(id) !== undefined) {
          target = this.store.resumeImport(id);
          stored = new Set(this.store.entryLinks(id).map((link) => link.id));
          resumed = true;
          return;
        }
        const createdAt = header.createdAt ?? this.ids.now();
        const createdMs = Date.parse(createdAt);
        target = this.store.beginImport({
          id,
          cwd: source.cwd ?? header.cwd ?? "",
          createdAt,
          parentSession: header.parentSession,
          headerExtra: header.extra,
          modifiedMs: Number.isNaN(createdMs) ? timeMs(this.ids.now()) : createdMs,
        });
      } else if (parsed.kind === "ignored") {
        ignoredLines[parsed.what] = (ignoredLines[parsed.what] ?? 0) + 1;
      } else if (parsed.kind === "entry" && resumed && this.storedBefore(stored, batchIds, parsed.entry.id)) {
        // Stored by an earlier import of this file: recognised by its id, not a duplicate.
        if (batchIds.has(parsed.entry.id)) addSkip({ line: lineNumber, reason: `duplicate entry id "${parsed.entry.id}"` });
        lastEntryId = parsed.entry.id;
      } else if (parsed.kind === "entry" && this.tooLarge(parsed.json ?? parsed.entry)) {
        const reason = `the entry is larger than the largest accepted (${this.maxEntryBytes!()} bytes, setting limits.maxEntryBytes)`;
        await skipEntry({ line: lineNumber, reason }, parsed.entry.id, parsed.entry.parentId);
      } else if (parsed.kind === "entry") {
        let { entry, json } = parsed;
        const parentId = await bridged(entry.parentId === null ? null : orphans.keptAncestor(entry.parentId));
        gaps.continued(parentId, lineNumber);
        if (parentId !== entry.parentId) {
          entry = { ...entry, parentId };
          json = undefined;
        }
        // A compaction whose first kept entry was refused keeps its tail from that entry's nearest
        // kept ancestor (on the same path): otherwise the context would lose the whole kept tail.
        const firstKept = entry.type === "compaction" ? orphans.keptAncestorForTail(entry.firstKeptEntryId) : undefined;
        if (entry.type === "compaction" && firstKept !== undefined) {
          entry = { ...entry, firstKeptEntryId: firstKept };
          json = undefined;
        }
        if (entry.type === "compaction" && format.checksCompactions === true && entry.parentId !== null) {
          // The context it replaced must be readable from the store: what is pending goes first.
          if (batch.length > 0) await writeBatch();
          await settle();
          entry = withRetention(entry, target!.path(entry.parentId));
          json = undefined;
        }
        orphans.kept(entry.id);
        batchIds.add(entry.id);
        lastEntryId = entry.id;
        batch.push({ line: lineNumber, entry, json, tokens: null });
        if (batch.length >= this.batchSize) await writeBatch();
      } else if (parsed.kind === "skip" && target && parsed.unreadable) {
        const skip = { line: lineNumber, reason: parsed.reason };
        addSkip(skip);
        gaps.unreadable(skip, lastEntryId, parsed.unreadable.lostId);
      } else if (parsed.kind === "skip" && target) {
        await skipEntry({ line: lineNumber, reason: parsed.reason }, parsed.id, parsed.parentId);
      } else if (parsed.kind === "skip") {
        addSkip({ line: lineNumber, reason: parsed.reason });
      }
    };

    try {
      for await (const text of source.path !== undefined ? fileLines(source.path, fileLimits) : stringLines(source.content ?? "")) {
        lineNumber++;
        const parsed = parser.parse(text, lineNumber);
        if (isLineList(parsed)) {
          if (text.trim().length > 0) nonBlankLines++;
          for (const each of parsed) await handle(each);
        } else {
          if (parsed.kind !== "blank") nonBlankLines++;
          await handle(parsed);
        }
      }
      if (parser.end) for (const each of parser.end()) await handle(each);
      if (!target) throw noHeader(format, nonBlankLines, firstUnreadable);
      if (batch.length > 0) await writeBatch();
      await settle();
      signal?.throwIfAborted();
      for (const entry of rerootedEntries) {
        // The parent exists now: it came later in the file, so the entry could not hang under it.
        if (this.store.hasEntry(target.sessionId, entry.parentId)) {
          addSkip({
            line: entry.line,
            reason: `parent "${entry.parentId}" of entry "${entry.id}" comes later in the file (a parent cycle, or lines out of order): stored as a root`,
          });
        }
      }
      await target.searchWritten();
      // An update that added nothing leaves the leaf where it is (the user may have moved it here).
      const session = target.finish(undefined, resumed && added === 0 ? undefined : parser.leafId?.());
      if (skippedCount > MAX_REPORTED_SKIPS) {
        skipped.push({ line: lineNumber, reason: `${skippedCount - MAX_REPORTED_SKIPS} more skipped lines are not listed` });
      }
      const bridgedGaps = gaps.summary();
      if (bridgedGaps !== undefined) log("warn", `import of session "${session.id}": ${bridgedGaps}`);
      if (rerooted > 0) {
        log(
          "warn",
          `import of session "${session.id}": ${rerooted} entries named a parent that is not an earlier line and became roots (first at line ${firstRerootedLine})`,
        );
      }
      skipped.sort((a, b) => a.line - b.line);
      return {
        session,
        entryCount: session.entryCount,
        skippedLines: skipped,
        format: format.name,
        addedEntries: resumed ? added : session.entryCount,
        updated: resumed,
        ignoredLines,
      };
    } catch (error) {
      // The batch sent is answered first (committed or not), then nothing half-imported may remain.
      await committing?.report.catch(() => {});
      await target?.searchWritten().catch(() => {});
      try {
        target?.abort();
      } catch (abortError) {
        log("error", `could not remove the partial import of "${target?.sessionId}": ${(abortError as Error).message}`);
      }
      throw importFailure(error, lineNumber, source.path);
    }
  }
}

/**
 * Entries refused on import (too large, too deep, invalid) that named an id and a parent. Their
 * children are not detached: they hang under the nearest kept ancestor (following chains of
 * refused entries), and the refused line's reason says where its children went.
 */
class SkippedParents {
  private readonly parents = new Map<string, { parentId: string | null; skip: SkippedLine; told: boolean; toldTail?: true }>();

  add(id: string, parentId: string | null, skip: SkippedLine): void {
    if (!this.parents.has(id)) this.parents.set(id, { parentId, skip, told: false });
  }

  /** A later kept entry with this id is the one its children mean. */
  kept(id: string): void {
    if (this.parents.size > 0) this.parents.delete(id);
  }

  /** `parentId` itself when it was not refused; else its nearest kept ancestor (null: none, a root). */
  keptAncestor(parentId: string): string | null {
    const first = this.parents.get(parentId);
    if (first === undefined) return parentId;
    const current = this.nearestKept(parentId);
    if (!first.told) {
      first.told = true;
      first.skip.reason +=
        current === null ? "; its children became roots (no kept ancestor)" : `; its children were attached to "${current}"`;
    }
    return current;
  }

  /**
   * For a compaction's first kept entry: the nearest kept ancestor when the entry was refused and
   * has one; undefined when it was not refused (or has no kept ancestor: nothing better to name).
   */
  keptAncestorForTail(firstKeptEntryId: string): string | undefined {
    const skipped = this.parents.get(firstKeptEntryId);
    if (skipped === undefined) return undefined;
    const kept = this.nearestKept(firstKeptEntryId);
    if (kept === null) return undefined;
    if (!skipped.toldTail) skipped.skip.reason += `; a compaction's kept entries now start at "${kept}"`;
    skipped.toldTail = true;
    return kept;
  }

  private nearestKept(skippedId: string): string | null {
    let current: string | null = skippedId;
    const seen = new Set<string>();
    while (current !== null && !seen.has(current)) {
      const skipped = this.parents.get(current);
      if (skipped === undefined) break;
      seen.add(current);
      current = skipped.parentId;
    }
    // A cycle among refused entries has no kept ancestor.
    return current !== null && seen.has(current) ? null : current;
  }
}

/**
 * A compaction of another agent with the report of what its summary kept of the context it
 * replaced: `path`, root → the compaction's parent, before its first kept entry.
 */
function withRetention(entry: CompactionEntry, path: readonly SessionEntry[]): CompactionEntry {
  const keptFrom = path.findIndex((each) => each.id === entry.firstKeptEntryId);
  const retention = checkRetention(entry.summary, contextProbes(keptFrom >= 0 ? path.slice(0, keptFrom) : path));
  return { ...entry, details: detailsWithRetention(entry.details, retention) };
}

function isLineList(parsed: ParsedLine | readonly ParsedLine[]): parsed is readonly ParsedLine[] {
  return Array.isArray(parsed);
}

/** Why a file without a header cannot be imported: say what it holds instead. */
function noHeader(format: SessionFormat, nonBlankLines: number, firstUnreadable: SkippedLine | undefined): AppError {
  if (nonBlankLines === 0) {
    return new AppError("import_failed", format === piFormat ? "the file is empty: a pi session starts with a header line" : `the file holds no session: ${format.label} names its session on ${format.headerHint}`);
  }
  const first = firstUnreadable ? ` (line ${firstUnreadable.line}: ${firstUnreadable.reason})` : "";
  return new AppError(
    "import_failed",
    `not ${format.label}: none of its ${nonBlankLines} non-blank lines is ${format.headerHint}${first}`,
    firstUnreadable ? { line: firstUnreadable.line } : {},
  );
}

/** The formats other than pi's, for the error about a file that is none of them. */
function otherFormats(): string {
  return knownFormatNames().filter((name) => name !== "pi-jsonl").join(", ");
}

function importFailure(error: unknown, lineNumber: number, path: string | undefined): Error {
  if (error instanceof AppError || error instanceof CancelledError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (lineNumber === 0 && path !== undefined) return new AppError("import_failed", `cannot read ${path}: ${message}`, { path });
  return new AppError("import_failed", `import failed near line ${lineNumber}: ${message}`, { line: lineNumber });
}
