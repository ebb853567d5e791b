/**
 * Writing an imported session in batches (one transaction per batch). The session is flagged as
 * importing until `finish`, so nobody sees it half-written; `abort` deletes it. Imported entries
 * are taken as the file has them, more leniently than appends: a label target or a compaction's
 * first kept entry may be missing (pi does not check either).
 */
import type { SessionEntry } from "@base-context/protocol";
import { emptyTally, type EntryWriter, type InsertedEntry } from "./entry-writer.js";
import { entryTimeMs, type PathColumns } from "./path-columns.js";
import { toSessionRecord, type SessionRecord, type SessionRow } from "./rows.js";
import type { ProcessOwner } from "./owner.js";
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
  /** Lines whose parent was not an earlier entry: stored as roots (parentId null), as pi shows them. */
  rerooted: { line: number; id: string; parentId: string }[];
}

/** Runs a write in one IMMEDIATE transaction (the store's: it also keeps WAL checkpoints in step). */
type Write = <T>(work: () => T, lockKey?: string) => T;

export class ImportTarget {
  private last: InsertedEntry | null = null;

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
  ) {}

  /**
   * One transaction per batch; checkpoints keep pace with the import instead of leaving hundreds
   * of MB of WAL to copy back after it, in the way of the requests that follow.
   */
  insertBatch(batch: readonly ImportedEntry[]): ImportBatchReport {
    return this.write(() => this.insertInTransaction(batch), this.sessionId);
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

  private insertInTransaction(batch: readonly ImportedEntry[]): ImportBatchReport {
    const report: ImportBatchReport = { skipped: [], rerooted: [] };
    const row = this.importingRow();
    const tally = emptyTally(row.leaf_id, row.modified_ms);
    // Ids taken before this batch, asked at once; and those this batch takes as it goes.
    const taken = this.writer.existingIds(this.sessionId, batch.map((imported) => imported.entry.id));
    for (const { line, entry: fileEntry, json: fileJson, tokens } of batch) {
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
      tally.modifiedMs = Math.max(tally.modifiedMs, entryTimeMs(entry) ?? tally.modifiedMs);
    }
    // The leaf of a loaded pi file is its last entry in file order.
    this.writer.applyTally(this.sessionId, tally);
    return report;
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
    return new ImportTarget(this.writer, this.sessions, session.id, this.write, session.importing);
  }

  /** Appends to the complete session `id` (an incremental re-import); session_not_found when there is none. */
  resume(id: string): ImportTarget {
    this.write(() => this.sessions.require(id), id);
    return new ImportTarget(this.writer, this.sessions, id, this.write, undefined, true);
  }
}
