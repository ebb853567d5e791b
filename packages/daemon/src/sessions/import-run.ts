/**
 * One import of one file, in the format import.ts chose: lines are read one at a time, turned into
 * entries by the format's parser, and written in one transaction per batch, in file order. A new
 * session stays invisible until the last batch; any failure deletes what was written.
 *
 * Formats whose entries keep the file's own ids (`incremental`) import a file of a session that is
 * already here by appending what is new: stored entries are recognised by their ids and passed over.
 */
import { constants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { resolve } from "node:path";
import type { CompactionEntry, ImportFormat, SessionEntry } from "@base-context/protocol";
import { checkRetention, detailsWithRetention } from "@base-context/core";
import { AppError, CancelledError } from "../errors.js";
import type { IdSource } from "../ids.js";
import { log } from "../log.js";
import { jsonBytes } from "./entry-size.js";
import {
  timeMs,
  type ImportBatchReport,
  type ImportedEntry,
  type ImportTarget,
  type SessionRecord,
  type SessionStore,
} from "../store/index.js";
import { fileLines, LineCursor, stringLines, type FileLimits, type LongLine } from "./line-source.js";
import type { LineParser, ParsedLine, ParseOutcome, SessionFileHeader, SessionFormat } from "./formats/format.js";
import { piFormat } from "./formats/pi/format.js";
import { ImportGaps, type SkippedLine } from "./import-gaps.js";
import { SkippedParents } from "./import-skipped-parents.js";
import { probesWithHandedBack } from "./handed-back.js";
import { compareFile, fileIdentity, type ImportCheckpoint, type ImportStates, type SavedImport } from "./import-state.js";

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
  /** The file's part imported before is not what was read then: nothing was added (`warning` says so). */
  rewritten?: boolean;
  warning?: string;
}

/** A garbage file could have millions of bad lines; the reply lists this many and summarizes the rest. */
const MAX_REPORTED_SKIPS = 1000;

export interface ImportRunOptions {
  /** Entries per write transaction. */
  batchSize: number;
  /** Where imports of files stopped; undefined: every import reads its file whole. */
  states: ImportStates | undefined;
  /** Stopped by its signal, the run keeps what it read and says where it stopped (the Claude Code hook's imports). */
  keepWhatIsRead?: boolean | undefined;
  /** The largest entry imported (`limits.maxEntryBytes`); a larger one is a skipped line. */
  maxEntryBytes: (() => number) | undefined;
}

type Entry = Extract<ParsedLine, { kind: "entry" }>;

export class ImportRun {
  private parser: LineParser;
  private readonly ignoredLines: Record<string, number> = {};
  private readonly skips = new Skips();
  private readonly orphans = new SkippedParents();
  private readonly gaps = new ImportGaps();
  private target: ImportTarget | undefined;
  /** The session was here: what is new in the file is appended. */
  private resumed = false;
  private added = 0;
  /** On a re-import: the ids stored (read once, then added to as batches are written). */
  private stored = new Set<string>();
  private batch: ImportedEntry[] = [];
  /** Ids in `batch` (not yet stored): a refused line with the id of a kept entry must not redirect its children. */
  private readonly batchIds = new Set<string>();
  /**
   * The batch sent whose commit has not been taken yet (ImportTarget.insertBatchAsync): the file
   * is read on while the server writes it, and the next batch is sent once it has committed.
   * Not earlier: two batches in flight would reach the server on two connections, whichever
   * first, and the entries' order (`seq`) must be the file's.
   */
  private committing: { written: number; report: Promise<ImportBatchReport> } | undefined;
  private lineNumber = 0;
  /** Where the next import of the file may go on from (import-state.ts). */
  private checkpoint: ImportCheckpoint | undefined;
  /** The last entry read (stored now or before): where the history goes on over an unreadable line. */
  private lastEntryId: string | null = null;
  /** Lines before the header that could not be read (pi skips them; the first one explains a refusal). */
  private firstUnreadable: SkippedLine | undefined;
  private nonBlankLines = 0;
  private signal: AbortSignal | undefined;

  constructor(
    private readonly store: SessionStore,
    private readonly ids: IdSource,
    private readonly format: SessionFormat,
    private readonly source: ImportSource,
    private readonly options: ImportRunOptions,
  ) {
    this.parser = format.createParser(ids);
  }

  /**
   * `signal` (the request's cancellation) is honoured between chunks and batches: what was written
   * is removed, unless the run keeps what it read (`keepWhatIsRead`): then it stops between two
   * chunks, stores the lines read whole, and saves where it stopped for the next import.
   */
  async run(fileLimits: FileLimits | undefined, signal?: AbortSignal): Promise<ImportResult> {
    this.signal = signal;
    let cursor: LineCursor | undefined;
    let start: SavedImport | undefined;
    try {
      const { path, content } = this.source;
      const saved = path !== undefined ? await this.savedStart(path) : undefined;
      if (saved !== undefined && "rewritten" in saved) return this.rewritten(saved.rewritten);
      start = saved;
      cursor = new LineCursor(start);
      for await (const text of path !== undefined ? fileLines(path, fileLimits, cursor) : stringLines(content ?? "")) {
        this.lineNumber++;
        // A last line still being written is read, but the next import starts before it.
        if (!cursor.terminated) this.checkpoint = this.here(cursor, this.lineNumber - 1);
        await this.line(typeof text === "string" ? this.parser.parse(text, this.lineNumber) : longLine(text, fileLimits));
      }
      // What the parser holds back at the end is given now; its snapshot (after) still says what waits for later lines.
      if (this.parser.end) for (const each of this.parser.end()) await this.handle(each);
      this.checkpoint ??= this.here(cursor, this.lineNumber);
      const result = await this.finish();
      if (path !== undefined && !this.source.newId) await this.saveState(path, result.session.id, start?.offset);
      return result;
    } catch (error) {
      if (this.options.keepWhatIsRead && signal?.aborted && error === signal.reason && cursor !== undefined && this.target) {
        return this.stopHere(cursor, start?.offset);
      }
      await this.abort();
      throw importFailure(error, this.lineNumber, this.source.path);
    }
  }

  /**
   * Stopped between two chunks of the file, every line read handled whole: what they gave is
   * stored (a new session is made visible with it, a prefix of the file's history) and the place
   * is saved, so the next import goes on from there instead of starting over.
   */
  private async stopHere(cursor: LineCursor, startedAt: number | undefined): Promise<ImportResult> {
    this.checkpoint = this.here(cursor, this.lineNumber);
    const result = await this.finish();
    if (this.source.path !== undefined && !this.source.newId) await this.saveState(this.source.path, result.session.id, startedAt);
    log("info", `import of ${this.source.path ?? "content"} stopped at line ${this.lineNumber} (${String(this.signal?.reason)}): the next import goes on from there`);
    return result;
  }

  private async line(parsed: ParseOutcome): Promise<void> {
    if (isLineList(parsed)) {
      this.nonBlankLines++;
      for (const each of parsed) await this.handle(each);
    } else {
      if (parsed.kind !== "blank") this.nonBlankLines++;
      await this.handle(parsed);
    }
  }

  /**
   * Where the last import of this file stopped, when it can go on from there: the state saved for
   * it (import-state.ts) names a session still here, its parser's snapshot reads, and the file is
   * the one read (else `rewritten`). The session is then resumed and the parser is the saved one.
   */
  private async savedStart(path: string): Promise<SavedImport | { rewritten: SavedImport } | undefined> {
    const { states } = this.options;
    if (states === undefined || this.source.newId) return undefined;
    const saved = states.load(resolve(path));
    if (saved === undefined || saved.format !== this.format.name || this.store.getSession(saved.sessionId) === undefined) return undefined;
    if (saved.lastEntryId !== null && !this.store.hasEntry(saved.sessionId, saved.lastEntryId)) return undefined;
    let parser: LineParser;
    try {
      parser = this.format.createParser(this.ids, saved.parser);
    } catch (error) {
      log("warn", `the import state saved for ${path} does not read (${(error as Error).message}): the file is read whole`);
      return undefined;
    }
    const comparison = await withFile(path, (handle) => compareFile(handle, saved));
    if (comparison === undefined) return undefined;
    if (comparison === "rewritten") return { rewritten: saved };
    this.parser = parser;
    this.target = this.store.resumeImport(saved.sessionId);
    this.resumed = true;
    this.lineNumber = saved.line;
    this.lastEntryId = saved.lastEntryId;
    return saved;
  }

  /** The file's first lines are not those imported: nothing is added (near-copies of what the session holds), and the reply says so. */
  private rewritten(saved: SavedImport): ImportResult {
    const session = this.store.getSession(saved.sessionId)!;
    const warning =
      `${this.source.path} was rewritten since it was imported (its first ${saved.offset} bytes, lines 1-${saved.line}, are not those read): ` +
      `nothing was added, the session keeps what it holds; import the file with a new id (--new-id) to keep this version too`;
    log("warn", warning);
    return {
      session,
      entryCount: session.entryCount,
      skippedLines: [],
      format: this.format.name,
      addedEntries: 0,
      updated: true,
      ignoredLines: {},
      rewritten: true,
      warning,
    };
  }

  /** The point this import may be gone on from: after `line`, the cursor's offset. */
  private here(cursor: LineCursor, line: number): ImportCheckpoint {
    return { offset: cursor.offset, line, crc: cursor.crc(), parser: this.parser.snapshot?.(), lastEntryId: this.lastEntryId };
  }

  /** Saves where this import stopped, for the next one (not when the parser cannot go on from the middle, nor when nothing moved). */
  private async saveState(path: string, sessionId: string, startedAt: number | undefined): Promise<void> {
    const { states } = this.options;
    const checkpoint = this.checkpoint;
    if (states === undefined || checkpoint === undefined || checkpoint.parser === undefined || checkpoint.offset === startedAt) return;
    const identity = await withFile(path, (handle) => fileIdentity(handle, checkpoint.offset));
    if (identity !== undefined) states.save({ ...checkpoint, ...identity, path: resolve(path), format: this.format.name, sessionId });
  }

  private async handle(parsed: ParsedLine): Promise<void> {
    const line = this.lineNumber;
    if (parsed.kind === "header") this.begin(parsed.header, parsed.idsOfItsOwn !== false);
    else if (parsed.kind === "ignored") this.ignoredLines[parsed.what] = (this.ignoredLines[parsed.what] ?? 0) + 1;
    else if (parsed.kind === "entry") await this.entry(parsed);
    else if (parsed.kind !== "skip") return;
    else if (!this.target) {
      this.firstUnreadable ??= { line, reason: parsed.reason };
      this.skips.add({ line, reason: parsed.reason });
    } else if (parsed.unreadable) {
      const skip = { line, reason: parsed.reason };
      this.skips.add(skip);
      this.gaps.unreadable(skip, this.lastEntryId, parsed.unreadable.lostId);
    } else await this.skipEntry({ line, reason: parsed.reason }, parsed.id, parsed.parentId);
  }

  /** The session the file holds: created, or (a file imported before, whose ids are its own) resumed. */
  private begin(header: SessionFileHeader, idsOfItsOwn: boolean): void {
    if (this.target) return; // going on from a saved state: the session is known
    const id = this.source.newId ? this.ids.sessionId() : header.id;
    if (idsOfItsOwn && this.store.getSession(id) !== undefined) {
      this.target = this.store.resumeImport(id);
      this.stored = new Set(this.store.entryLinks(id).map((link) => link.id));
      this.resumed = true;
      return;
    }
    const createdAt = header.createdAt ?? this.ids.now();
    const createdMs = Date.parse(createdAt);
    try {
      this.target = this.store.beginImport({
        id,
        cwd: this.source.cwd ?? header.cwd ?? "",
        createdAt,
        parentSession: header.parentSession,
        headerExtra: header.extra,
        modifiedMs: Number.isNaN(createdMs) ? timeMs(this.ids.now()) : createdMs,
      });
    } catch (error) {
      // Another process is importing the same file, or has just done so (Claude Code runs its hooks
      // at once): this run waits for it, then adds what is new.
      const beside = this.store.importInProgress(id) || this.store.getSession(id) !== undefined;
      if (idsOfItsOwn && error instanceof AppError && error.code === "session_exists" && beside) {
        throw new ImportedBeside(id);
      }
      throw error;
    }
  }

  private async entry(parsed: Entry): Promise<void> {
    const { id } = parsed.entry;
    if (this.resumed && (this.batchIds.has(id) || this.stored.has(id))) {
      // Stored by an earlier import of this file: recognised by its id, not a duplicate.
      if (this.batchIds.has(id)) this.skips.add({ line: this.lineNumber, reason: `duplicate entry id "${id}"` });
      this.lastEntryId = id;
    } else if (this.tooLarge(parsed.json ?? parsed.entry)) {
      const reason = `the entry is larger than the largest accepted (${this.options.maxEntryBytes!()} bytes, setting limits.maxEntryBytes)`;
      await this.skipEntry({ line: this.lineNumber, reason }, id, parsed.entry.parentId);
    } else await this.keep(parsed);
  }

  /** An entry to store: its parent and first kept entry as the refused and unreadable lines leave them. */
  private async keep({ entry: fileEntry, json: fileJson }: Entry): Promise<void> {
    let entry = fileEntry;
    let json = fileJson;
    const parentId = await this.bridged(entry.parentId === null ? null : this.orphans.keptAncestor(entry.parentId));
    this.gaps.continued(parentId, this.lineNumber);
    if (parentId !== entry.parentId) {
      entry = { ...entry, parentId };
      json = undefined;
    }
    // A compaction whose first kept entry was refused keeps its tail from that entry's nearest
    // kept ancestor (on the same path): otherwise the context would lose the whole kept tail.
    const firstKept = entry.type === "compaction" ? this.orphans.keptAncestorForTail(entry.firstKeptEntryId) : undefined;
    if (entry.type === "compaction" && firstKept !== undefined) {
      entry = { ...entry, firstKeptEntryId: firstKept };
      json = undefined;
    }
    if (entry.type === "compaction" && this.format.checksCompactions === true && entry.parentId !== null) {
      // The context it replaced must be readable from the store: what is pending goes first.
      if (this.batch.length > 0) await this.writeBatch();
      await this.settle();
      entry = withRetention(entry, this.target!.path(entry.parentId));
      json = undefined;
    }
    this.orphans.kept(entry.id);
    this.batchIds.add(entry.id);
    this.lastEntryId = entry.id;
    this.batch.push({ line: this.lineNumber, entry, json, tokens: null });
    if (this.batch.length >= this.options.batchSize) await this.writeBatch();
  }

  /** The same limit as on append (entry-size.ts): the line's own bytes when it is stored as is. */
  private tooLarge(entry: string | SessionEntry): boolean {
    if (this.options.maxEntryBytes === undefined) return false;
    const limit = this.options.maxEntryBytes();
    return (typeof entry === "string" ? Buffer.byteLength(entry, "utf8") : jsonBytes(entry, limit)) > limit;
  }

  /** A well-formed entry that is not stored: its children will hang under its nearest kept ancestor. */
  private async skipEntry(skip: SkippedLine, id: string | undefined, parentId: string | null | undefined): Promise<void> {
    this.skips.add(skip);
    if (id === undefined || parentId === undefined || this.batchIds.has(id)) return;
    await this.settle(); // what was sent is then stored, and seen
    if (this.store.hasEntry(this.target!.sessionId, id)) return;
    this.orphans.add(id, parentId, skip);
  }

  /** The parent an entry read after an unreadable line gets: the history bridged over the gap. */
  private async bridged(parentId: string | null): Promise<string | null> {
    if (parentId === null || !this.gaps.open || (await this.known(parentId))) return parentId;
    const bridge = this.gaps.parentFor(parentId, this.lineNumber);
    return bridge === undefined ? parentId : bridge;
  }

  /** Whether `id` is an entry of this file read before (in the batch, stored now or by an earlier import). */
  private async known(id: string): Promise<boolean> {
    if (id === this.lastEntryId || this.batchIds.has(id) || this.stored.has(id)) return true;
    await this.settle(); // what was sent is then stored, and seen
    return this.store.hasEntry(this.target!.sessionId, id);
  }

  /** Waits for the batch before it, then sends the batch. */
  private async writeBatch(): Promise<void> {
    // A run that keeps what it read stops only between two chunks of the file, where every line read is whole.
    if (!this.options.keepWhatIsRead) this.signal?.throwIfAborted();
    await this.settle();
    const report = this.target!.insertBatchAsync(this.batch);
    // Its failure is taken by settle(); until then it must not count as unhandled.
    report.catch(() => {});
    this.committing = { written: this.batch.length, report };
    if (this.resumed) for (const { entry } of this.batch) this.stored.add(entry.id);
    this.batch = [];
    this.batchIds.clear();
  }

  /** Waits for the batch sent and takes its report. */
  private async settle(): Promise<void> {
    if (!this.committing) return;
    const { written, report: answer } = this.committing;
    this.committing = undefined;
    const report = await answer;
    this.added += written - report.skipped.length - report.present;
    for (const skip of report.skipped) this.skips.add(skip);
    this.skips.rerooted(report.rerooted);
  }

  private async finish(): Promise<ImportResult> {
    const target = this.target;
    if (!target) throw noHeader(this.format, this.nonBlankLines, this.firstUnreadable);
    if (this.batch.length > 0) await this.writeBatch();
    await this.settle();
    if (!this.options.keepWhatIsRead) this.signal?.throwIfAborted();
    this.skips.parentsLater((id) => this.store.hasEntry(target.sessionId, id));
    await target.searchWritten();
    // An update that added nothing leaves the leaf where it is (the user may have moved it here).
    const session = target.finish(undefined, this.resumed && this.added === 0 ? undefined : this.parser.leafId?.());
    const bridged = this.gaps.summary();
    if (bridged !== undefined) log("warn", `import of session "${session.id}": ${bridged}`);
    return {
      session,
      entryCount: session.entryCount,
      skippedLines: this.skips.report(session.id, this.lineNumber),
      format: this.format.name,
      addedEntries: this.resumed ? this.added : session.entryCount,
      updated: this.resumed,
      ignoredLines: this.ignoredLines,
    };
  }

  /** After a failure: the batch sent is answered first (committed or not), then nothing half-imported may remain. */
  private async abort(): Promise<void> {
    await this.committing?.report.catch(() => {});
    await this.target?.searchWritten().catch(() => {});
    try {
      this.target?.abort();
    } catch (abortError) {
      log("error", `could not remove the partial import of "${this.target?.sessionId}": ${(abortError as Error).message}`);
    }
  }
}

/** The lines an import skipped, and the entries the store made roots, for the reply and the log. */
class Skips {
  private readonly list: SkippedLine[] = [];
  private count = 0;
  private rerootedCount = 0;
  private firstRerootedLine = 0;
  /** Rerooted entries, to tell afterwards which parents came later in the file (cycles). */
  private readonly rerootedEntries: { line: number; id: string; parentId: string }[] = [];

  add(skip: SkippedLine): void {
    if (this.count++ < MAX_REPORTED_SKIPS) this.list.push(skip);
  }

  rerooted(entries: ImportBatchReport["rerooted"]): void {
    if (this.rerootedCount === 0 && entries.length > 0) this.firstRerootedLine = entries[0]!.line;
    this.rerootedCount += entries.length;
    for (const entry of entries) if (this.rerootedEntries.length < MAX_REPORTED_SKIPS) this.rerootedEntries.push(entry);
  }

  /** Rerooted entries whose parent exists now: it came later in the file, so the entry could not hang under it. */
  parentsLater(exists: (id: string) => boolean): void {
    for (const entry of this.rerootedEntries) {
      if (!exists(entry.parentId)) continue;
      this.add({
        line: entry.line,
        reason: `parent "${entry.parentId}" of entry "${entry.id}" comes later in the file (a parent cycle, or lines out of order): stored as a root`,
      });
    }
  }

  /** The skipped lines in line order (the count of those not listed last); the roots made, said in the log. */
  report(sessionId: string, lastLine: number): SkippedLine[] {
    if (this.count > MAX_REPORTED_SKIPS) {
      this.list.push({ line: lastLine, reason: `${this.count - MAX_REPORTED_SKIPS} more skipped lines are not listed` });
    }
    if (this.rerootedCount > 0) {
      log(
        "warn",
        `import of session "${sessionId}": ${this.rerootedCount} entries named a parent that is not an earlier line and became roots (first at line ${this.firstRerootedLine})`,
      );
    }
    return this.list.sort((a, b) => a.line - b.line);
  }
}

/**
 * A compaction of another agent with the report of what its summary kept of the context it
 * replaced: `path`, root → the compaction's parent, before its first kept entry.
 */
function withRetention(entry: CompactionEntry, path: readonly SessionEntry[]): CompactionEntry {
  const keptFrom = path.findIndex((each) => each.id === entry.firstKeptEntryId);
  const retention = checkRetention(entry.summary, probesWithHandedBack(keptFrom >= 0 ? path.slice(0, keptFrom) : path));
  return { ...entry, details: detailsWithRetention(entry.details, retention) };
}

/** `work` on the file open for reading; undefined when it cannot be opened or is not a regular file (the import then says why). */
async function withFile<T>(path: string, work: (handle: FileHandle) => Promise<T>): Promise<T | undefined> {
  const { open } = await import("node:fs/promises");
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    return (await handle.stat()).isFile() ? await work(handle) : undefined;
  } finally {
    await handle.close();
  }
}

/** A line too long to read is skipped like any line that cannot be read: the history is bridged over it. */
function longLine(line: LongLine, limits: FileLimits | undefined): ParsedLine {
  const reason = `longer than limits.maxImportLineBytes (${line.bytes} bytes, the limit is ${limits?.maxLineBytes ?? "unset"}): not read`;
  return { kind: "skip", reason, unreadable: {} };
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

/** Thrown when another process is importing the session for the first time: wait for it, then import again (import.ts). */
export class ImportedBeside extends Error {
  constructor(readonly sessionId: string) {
    super(`session "${sessionId}" is being imported by another process`);
  }
}

export function importFailure(error: unknown, lineNumber: number, path: string | undefined): Error {
  if (error instanceof AppError || error instanceof CancelledError || error instanceof ImportedBeside) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (lineNumber === 0 && path !== undefined) return new AppError("import_failed", `cannot read ${path}: ${message}`, { path });
  return new AppError("import_failed", `import failed near line ${lineNumber}: ${message}`, { line: lineNumber });
}
