/**
 * Writing an imported session in batches (one transaction per batch). The session is flagged as
 * importing until `finish`, so nobody sees it half-written; `abort` deletes it. Imported entries
 * are taken as the file has them, more leniently than appends: a label target or a compaction's
 * first kept entry may be missing (pi does not check either).
 */
import type { SessionEntry } from "@base-context/protocol";
import { emptyTally, type EntryWriter, type InsertedEntry } from "./entry-writer.js";
import { entryTimeMs, type PathColumns } from "./path-columns.js";
import { toSessionRecord, type SessionRecord, type SessionRow, type SessionTally } from "./rows.js";
import type { ProcessOwner } from "./owner.js";
import type { StoreEngine } from "./store-engine.js";
import type { FinalSessionFields, NewSession, SessionsTable } from "./sessions-table.js";

export interface ImportedEntry {
  /** 1-based line number in the file, for reports. */
  line: number;
  entry: SessionEntry;
  /** The entry's JSON as the file has it, when it is exactly `entry` (stored as is). */
  json?: string | undefined;
  tokens: number | null;
}

export interface ImportBatchReport {
  skipped: { line: number; reason: string }[];
  /**
   * Entries of a re-import that were stored already, before this batch (by an earlier import that
   * read further than the point this one went on from, or by one running beside it): passed over.
   */
  present: number;
  /** Lines whose parent was not an earlier entry: stored as roots (parentId null), as pi shows them. */
  rerooted: { line: number; id: string; parentId: string }[];
}

/** Runs a write in one IMMEDIATE transaction (the store's: it also keeps WAL checkpoints in step). */
type Write = <T>(work: () => T, lockKey?: string) => T;
/** What the engine offers to write without blocking the thread (StoreEngine.writeAsync, searchWritten). */
export interface AsyncWrites {
  writeAsync: NonNullable<StoreEngine["writeAsync"]>;
  searchWritten?: StoreEngine["searchWritten"];
  expectImport?: StoreEngine["expectImport"];
}

/** What a batch wrote: its report, the ids it took and the leaf it left. */
interface WrittenBatch {
  report: ImportBatchReport;
  ids: string[];
  leafId: string | null;
}

/**
 * A fresh import written without blocking the thread keeps what its batches would otherwise read
 * at their start: nobody else writes a session that is being imported, so the ids taken and the
 * leaf are those its own batches left. A batch then waits for no answer before its commit.
 */
interface SentBatches {
  ids: Set<string>;
  leafId: string | null;
}

export class ImportTarget {
  private last: InsertedEntry | null = null;
  private readonly sent: SentBatches | undefined;

  constructor(
    private readonly writer: EntryWriter,
    private readonly sessions: SessionsTable,
    readonly sessionId: string,
    private readonly write: Write,
    /** Who imports (the row records it): another daemon's import of the same id is never touched. */
    private readonly owner: ProcessOwner | undefined,
    /**
     * Appending what is new in a file to a complete session (an incremental re-import): the
     * session stays visible, each batch is whole entries, and `abort` keeps the batches written
     * (a prefix of the new entries; the next re-import adds the rest).
     */
    readonly resumed = false,
    private readonly asyncWrites?: AsyncWrites,
  ) {
    if (asyncWrites && !resumed) this.sent = { ids: new Set(), leafId: null };
  }

  /**
   * One transaction per batch; checkpoints keep pace with the import instead of leaving hundreds
   * of MB of WAL to copy back after it, in the way of the requests that follow.
   */
  insertBatch(batch: readonly ImportedEntry[]): ImportBatchReport {
    return this.write(() => this.insertInTransaction(batch), this.sessionId);
  }

  /**
   * `insertBatch`, its commit awaited on the event loop where the engine can (PostgreSQL): the
   * batch is sent before this returns, and the caller reads the file on while the server writes
   * it. The next batch is sent only once this one has committed: two batches in flight would reach
   * the server on two connections, whichever first, and the entries' order (`seq`) must be the
   * file's. On SQLite it is written at once. A fresh import's search rows are written apart, after
   * each batch (StoreEngine.writeAsync): `searchWritten` before `finish`.
   */
  async insertBatchAsync(batch: readonly ImportedEntry[]): Promise<ImportBatchReport> {
    if (this.asyncWrites) {
      const sent = this.sent;
      if (!sent) return this.asyncWrites.writeAsync(() => this.insertInTransaction(batch), this.sessionId);
      // What the batch takes is noted as it is sent (if it fails, so does the import); a
      // transaction made again takes it back first (after a deadlock, or when a token count that
      // rode along failed the commit: PgWriteRunner.runAsync then runs `work` the blocking way).
      const leafBefore = sent.leafId;
      let wrote: WrittenBatch | undefined;
      const work = () => {
        if (wrote) for (const id of wrote.ids) sent.ids.delete(id);
        sent.leafId = leafBefore;
        wrote = this.insertInTransaction(batch, sent);
        for (const id of wrote.ids) sent.ids.add(id);
        sent.leafId = wrote.leafId;
        return wrote.report;
      };
      // A fresh import is invisible until finish(): its search rows may follow its entries.
      return this.asyncWrites.writeAsync(work, this.sessionId, { searchApart: true });
    }
    return this.insertBatch(batch);
  }

  /**
   * Makes the session visible. `final` sets the row's derived fields as given instead of as the
   * entries left them: a copy of a stored session (migrate) keeps its leaf, modification time,
   * name and first message exactly, whatever the entries' order or timestamps would say.
   */
  finish(final?: FinalSessionFields, leafId?: string): SessionRecord {
    return this.write(() => {
      this.importingRow();
      if (final) this.sessions.setDerived(this.sessionId, final);
      // A format whose side conversations come after the main one names the main leaf.
      if (leafId !== undefined && this.writer.exists(this.sessionId, leafId)) this.sessions.setLeaf(this.sessionId, leafId);
      if (!this.resumed) this.sessions.finishImport(this.sessionId);
      return toSessionRecord(this.sessions.row(this.sessionId)!);
    }, this.sessionId);
  }

  /** Settles once the search rows of every batch sent are written (rejects with a failure among them). */
  searchWritten(): Promise<void> {
    return this.asyncWrites?.searchWritten?.(this.sessionId) ?? Promise.resolve();
  }

  /** Root → `leafId` among the entries written so far (and before, on a re-import). */
  path(leafId: string): SessionEntry[] {
    return this.writer.path(this.sessionId, leafId).map((stored) => stored.entry);
  }

  /** Removes everything written so far. */
  abort(): void {
    if (this.resumed) return;
    this.write(() => {
      // Only while it is still this import's row: another daemon may have taken it over already.
      if (this.isOurs(this.sessions.row(this.sessionId))) this.sessions.delete(this.sessionId);
    }, this.sessionId);
  }

  /**
   * The session row, still being imported. Gone (or complete) only when another daemon took this
   * import for a dead one's, removed it, and the id was used again: nothing more is written to it.
   */
  private importingRow(): SessionRow {
    const row = this.sessions.row(this.sessionId);
    if (!row || !this.isOurs(row)) throw new Error(`session "${this.sessionId}" disappeared during its import`);
    return row;
  }

  private isOurs(row: SessionRow | undefined): row is SessionRow {
    if (this.resumed) return row !== undefined && row.import_started_ms === null;
    if (!row || row.import_started_ms === null) return false;
    return !this.owner || (row.import_owner_pid === this.owner.pid && row.import_owner_start === this.owner.start);
  }

  private insertInTransaction(batch: readonly ImportedEntry[]): ImportBatchReport;
  private insertInTransaction(batch: readonly ImportedEntry[], sent: SentBatches): WrittenBatch;
  private insertInTransaction(batch: readonly ImportedEntry[], sent?: SentBatches): ImportBatchReport | WrittenBatch {
    const report: ImportBatchReport = { skipped: [], present: 0, rerooted: [] };
    let tally: SessionTally;
    let taken: Set<string>;
    /** On a re-import, the ids stored before this batch: passed over, not reported as duplicates. */
    let before: ReadonlySet<string> = new Set();
    if (sent) {
      // Nothing read: the session's row is checked on the server (still this import's), and the
      // row's modification time is kept as the larger of the two there (entry-writer.ts).
      this.asyncWrites!.expectImport?.(this.sessionId, this.owner);
      tally = emptyTally(sent.leafId, 0);
      taken = new Set(batch.map((imported) => imported.entry.id).filter((id) => sent.ids.has(id)));
    } else {
      const row = this.importingRow();
      tally = emptyTally(row.leaf_id, row.modified_ms);
      // Ids taken before this batch, asked at once; and those this batch takes as it goes.
      taken = this.writer.existingIds(this.sessionId, batch.map((imported) => imported.entry.id));
      if (this.resumed) before = new Set(taken);
    }
    const ids: string[] = [];
    for (const { line, entry: fileEntry, json: fileJson, tokens } of batch) {
      if (before.has(fileEntry.id)) {
        report.present++;
        continue;
      }
      if (taken.has(fileEntry.id)) {
        report.skipped.push({ line, reason: `duplicate entry id "${fileEntry.id}"` });
        continue;
      }
      let entry = fileEntry;
      let json = fileJson;
      let parent: PathColumns | null = null;
      if (entry.parentId !== null) {
        parent = this.parentColumns(entry.parentId);
        if (!parent) {
          report.rerooted.push({ line, id: entry.id, parentId: entry.parentId });
          entry = { ...entry, parentId: null };
          json = undefined;
        }
      }
      const firstKeptDepth =
        entry.type === "compaction" ? this.writer.firstKeptDepth(this.sessionId, entry.firstKeptEntryId, parent) : null;
      this.last = this.writer.insert(this.sessionId, entry, parent, { tokens, firstKeptDepth, json }, tally);
      taken.add(entry.id);
      ids.push(entry.id);
      tally.modifiedMs = Math.max(tally.modifiedMs, entryTimeMs(entry) ?? tally.modifiedMs);
    }
    // The leaf of a loaded pi file is its last entry in file order.
    this.writer.applyTally(this.sessionId, tally);
    return sent ? { report, ids, leafId: tally.leafId } : report;
  }

  /** Parent lookup; in a pi file the parent is nearly always the previous line. */
  private parentColumns(parentId: string): PathColumns | null {
    if (this.last?.id === parentId) return this.last;
    return this.writer.pathColumns(this.sessionId, parentId) ?? null;
  }
}

export class ImportWriter {
  constructor(
    private readonly writer: EntryWriter,
    private readonly sessions: SessionsTable,
    private readonly write: Write,
    private readonly asyncWrites?: AsyncWrites,
  ) {}

  /**
   * Creates the (invisible) session; AppError session_exists when the id is taken. `reclaim`
   * first removes a half-import of that id whose process is gone.
   */
  begin(session: NewSession, nowMs: number, reclaim: (id: string) => void): ImportTarget {
    this.write(() => {
      reclaim(session.id);
      this.sessions.insert(session, nowMs);
    }, session.id);
    return new ImportTarget(this.writer, this.sessions, session.id, this.write, session.importing, false, this.asyncWrites);
  }

  /** Appends to the complete session `id` (an incremental re-import); session_not_found when there is none. */
  resume(id: string): ImportTarget {
    this.write(() => this.sessions.require(id), id);
    return new ImportTarget(this.writer, this.sessions, id, this.write, undefined, true, this.asyncWrites);
  }
}
