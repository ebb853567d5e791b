/**
 * The append transaction. Reading the leaf, inserting the entries and moving the leaf happen in
 * one BEGIN IMMEDIATE transaction that reads the leaf from the database, never from a cache:
 * another daemon process may have appended to the same session a moment ago.
 */
import type { EntryInput, SessionEntry } from "@base-context/protocol";
import { AppError } from "../errors.js";
import type { IdSource } from "../ids.js";
import { emptyTally, type EntryWriter } from "./entry-writer.js";
import { ancestorAtDepth } from "./path-walk.js";
import type { PathColumns } from "./path-columns.js";
import { ENTRY_COLUMNS, toStoredEntry, type EntryRow, type StoredEntry } from "./rows.js";
import type { RequestResults } from "./request-results.js";
import type { SessionsTable } from "./sessions-table.js";
import type { SqlStatements } from "./statements.js";
import type { LeafExpectations } from "./store-engine.js";
import type { WriteRunner } from "./write-runner.js";

export interface AppendRequest {
  sessionId: string;
  /** Appended in order, each a child of the previous; `id`/`timestamp` are assigned when absent. */
  entries: readonly EntryInput[];
  /**
   * Token counts of `entries`, in order, when the caller already has them: stored with the
   * entries. Absent (or null for an entry): stored as NULL, to be counted afterwards.
   */
  tokens?: readonly (number | null)[] | undefined;
  /** Parent of the first entry: undefined = the current leaf, null = a new root. */
  parentId?: string | null | undefined;
  /**
   * Idempotency: when this requestId was already used on the session (for `method`), nothing is
   * written and the first result is returned. The params of the retry are not compared.
   */
  request?: { id: string; method: string; extra?: unknown } | undefined;
  /**
   * Append only if this entry is still the leaf or one of its ancestors (e.g. the leaf a
   * compaction was prepared for); otherwise the outcome is "stale" and nothing is written.
   */
  onlyIfOnPath?: string | undefined;
}

export type AppendOutcome =
  | { status: "appended"; entries: StoredEntry[]; leafId: string }
  | { status: "replayed"; entries: StoredEntry[]; leafId: string; extra?: unknown }
  | { status: "stale"; leafId: string | null };

/** What request_results keeps for an append: enough to rebuild the reply from the stored entries. */
interface AppendResultRecord {
  entryIds: string[];
  leafId: string;
  extra?: unknown;
}

const SELECT_ENTRY = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE session_id = ? AND id = ?`;

/** The leaf an append left, as the next append expects it. */
interface KnownLeaf extends PathColumns {
  seq: number;
}

/** An inserted entry's path columns and its seq (read once its transaction has answered). */
type InsertedColumns = PathColumns & { readonly seq: number };

/** Sessions whose leaf is remembered (the most recently appended to). */
const KNOWN_LEAVES = 256;

export class Appender {
  constructor(
    private readonly sql: SqlStatements,
    private readonly writer: EntryWriter,
    private readonly sessions: SessionsTable,
    private readonly requests: RequestResults,
    private readonly ids: Pick<IdSource, "now">,
    /** Runs the append in one IMMEDIATE transaction (store/sqlite/write-lock.ts). */
    private readonly write: WriteRunner,
    private readonly expectations?: LeafExpectations,
    /** The engine's write whose commit is awaited on the event loop (StoreEngine.writeAsync). */
    private readonly writeAsync?: <T>(work: () => T, lockKey: string) => Promise<T>,
  ) {}

  private readonly knownLeaves = new Map<string, KnownLeaf>();

  append(request: AppendRequest): AppendOutcome {
    const known = this.expectedLeaf(request);
    if (known) {
      try {
        const outcome = this.write(() => this.appendInTransaction(request, known), request.sessionId);
        return this.remember(request.sessionId, settled(outcome), this.lastInserted);
      } catch (error) {
        this.knownLeaves.delete(request.sessionId);
        if (!this.expectations!.isMiss(error)) throw error;
      }
    }
    const outcome = this.write(() => this.appendInTransaction(request), request.sessionId);
    return this.remember(request.sessionId, settled(outcome), this.lastInserted);
  }

  /**
   * The same append, for an engine that can commit it without blocking the thread
   * (StoreEngine.writeAsync): a one-round-trip append sends everything at once and awaits
   * its answer on the event loop, so the thread serves others meanwhile. Appends to one session
   * apply in the order they were asked: one asked while another to the same session awaits its
   * commit starts after it. Everything else is `append`, and without waiting, as on SQLite,
   * where this settles with the outcome `append` gives at once.
   */
  async appendAsync(request: AppendRequest): Promise<AppendOutcome> {
    const { sessionId } = request;
    if (!this.writeAsync) return this.append(request);
    const before = this.committing.get(sessionId);
    const mine = before ? before.then(() => this.appendNow(request)) : this.appendNow(request);
    const tail = mine.then(
      () => undefined,
      () => undefined,
    );
    this.committing.set(sessionId, tail);
    void tail.then(() => {
      if (this.committing.get(sessionId) === tail) this.committing.delete(sessionId);
    });
    return mine;
  }

  /** Sessions with an append awaiting its commit (or waiting for one), and when the last of them is done. */
  private readonly committing = new Map<string, Promise<void>>();

  /** Runs at once up to its commit (an async function's body runs synchronously until it awaits). */
  private async appendNow(request: AppendRequest): Promise<AppendOutcome> {
    const known = this.expectedLeaf(request);
    return known ? this.appendCommittedLater(request, known) : this.append(request);
  }

  private async appendCommittedLater(request: AppendRequest, known: KnownLeaf): Promise<AppendOutcome> {
    const { sessionId } = request;
    // Until it is answered, an append made meanwhile (not queued: a compaction's) reads the leaf.
    this.knownLeaves.delete(sessionId);
    let last: InsertedColumns | undefined;
    try {
      const outcome = await this.writeAsync!(() => {
        const made = this.appendInTransaction(request, known);
        last = this.lastInserted;
        return made;
      }, sessionId);
      // Remembered only if no other append remembered a leaf of the session meanwhile (it is newer).
      return this.knownLeaves.has(sessionId) ? settled(outcome) : this.remember(sessionId, settled(outcome), last);
    } catch (error) {
      if (!this.expectations!.isMiss(error)) throw error;
    }
    return this.append(request);
  }

  /** The leaf a one-round-trip append may expect, when the request is one that can be made so. */
  private expectedLeaf(request: AppendRequest): KnownLeaf | undefined {
    if (!this.expectations?.usable || request.parentId !== undefined || request.onlyIfOnPath !== undefined) return undefined;
    // Labels and compactions refer to other entries, which is read first.
    if (request.entries.some((entry) => entry.type === "label" || entry.type === "compaction")) return undefined;
    return this.knownLeaves.get(request.sessionId);
  }

  private remember(sessionId: string, outcome: AppendOutcome, inserted: InsertedColumns | undefined): AppendOutcome {
    if (!this.expectations) return outcome;
    this.knownLeaves.delete(sessionId);
    const last = outcome.status === "appended" ? inserted : undefined;
    if (last && last.id === outcome.leafId) {
      this.knownLeaves.set(sessionId, { ...last, seq: last.seq });
      if (this.knownLeaves.size > KNOWN_LEAVES) this.knownLeaves.delete(this.knownLeaves.keys().next().value!);
    }
    return outcome;
  }

  /** The last entry the latest append inserted (its path columns, for the next append to expect). */
  private lastInserted: InsertedColumns | undefined;

  /**
   * The append. With `known`, nothing is read first: the leaf is expected to be `known`, and ids
   * are not looked up (LeafExpectations).
   */
  private appendInTransaction(request: AppendRequest, known?: KnownLeaf): AppendOutcome {
    const { sessionId } = request;
    if (request.entries.length === 0) throw invalidEntry("no entries to append", { sessionId });
    this.lastInserted = undefined;
    let parent: PathColumns | null = null;
    let leafBefore: string | null;
    if (known) {
      this.expectations!.expect(sessionId, known);
      parent = known;
      leafBefore = known.id;
    } else {
      const session = this.sessions.require(sessionId);
      leafBefore = session.leaf_id;
      if (request.request) {
        const stored = this.requests.find(sessionId, request.request.id, request.request.method);
        if (stored) return this.replay(sessionId, stored.result as AppendResultRecord);
      }
      if (request.onlyIfOnPath !== undefined && !this.isOnPathTo(sessionId, request.onlyIfOnPath, session.leaf_id)) {
        return { status: "stale", leafId: session.leaf_id };
      }
      const parentId = request.parentId === undefined ? session.leaf_id : request.parentId;
      if (parentId !== null) {
        parent = this.writer.pathColumns(sessionId, parentId) ?? null;
        if (!parent) throw invalidEntry(`parentId "${parentId}" is not an entry of session "${sessionId}"`, { sessionId, parentId });
      }
    }

    const now = this.ids.now();
    const nowMs = timeMs(now);
    const tally = emptyTally(leafBefore, nowMs);
    const appended: StoredEntry[] = [];
    request.entries.forEach((draft, index) => {
      const entry = this.buildEntry(sessionId, draft, parent?.id ?? null, now, known === undefined);
      const firstKeptDepth = this.checkReferences(sessionId, entry, parent);
      const tokens = request.tokens?.[index] ?? null;
      const inserted = this.writer.insert(sessionId, entry, parent, { tokens, firstKeptDepth }, tally);
      // The seq as the engine gives it (read once the transaction has answered: `settled`).
      const stored = Object.defineProperty({ entry, tokens, depth: inserted.depth }, "seq", {
        get: () => inserted.seq,
        enumerable: true,
        configurable: true,
      });
      appended.push(stored as StoredEntry);
      parent = inserted;
      this.lastInserted = inserted;
    });
    this.writer.applyTally(sessionId, tally);
    const leafId = parent!.id;
    if (request.request) {
      const record: AppendResultRecord = { entryIds: appended.map((stored) => stored.entry.id), leafId };
      if (request.request.extra !== undefined) record.extra = request.request.extra;
      this.requests.save(sessionId, request.request.id, request.request.method, record, nowMs);
    }
    return { status: "appended", entries: appended, leafId };
  }

  /** The final entry: `type, id, parentId, timestamp` first (pi's key order), then the body. */
  private buildEntry(sessionId: string, draft: EntryInput, parentId: string | null, now: string, checkId: boolean): SessionEntry {
    // A loose input may carry its own parentId; the store decides it.
    const { type, id: givenId, timestamp, parentId: _ignored, ...body } = draft as EntryInput & { parentId?: unknown };
    let id = givenId;
    // Unchecked, an id already taken fails the insert on the unique index: a miss (LeafExpectations).
    if (id === undefined) id = checkId ? this.writer.freshId(sessionId) : this.writer.newId();
    else if (checkId && this.writer.exists(sessionId, id)) {
      throw new AppError("entry_exists", `session "${sessionId}" already has an entry "${id}"`, { sessionId, entryId: id });
    }
    return { type, id, parentId, timestamp: timestamp ?? now, ...body } as SessionEntry;
  }

  /**
   * Checks what an entry refers to; returns the depth of a compaction's first kept entry.
   * A label's target must exist; a compaction's firstKeptEntryId must be on its path.
   */
  private checkReferences(sessionId: string, entry: SessionEntry, parent: PathColumns | null): number | null {
    if (entry.type === "label" && !this.writer.exists(sessionId, entry.targetId)) {
      throw invalidEntry(`label targetId "${entry.targetId}" is not an entry of session "${sessionId}"`, {
        sessionId,
        targetId: entry.targetId,
      });
    }
    if (entry.type !== "compaction") return null;
    const depth = this.writer.firstKeptDepth(sessionId, entry.firstKeptEntryId, parent);
    if (depth === null) {
      throw invalidEntry(
        `compaction firstKeptEntryId "${entry.firstKeptEntryId}" is not on the path the compaction is appended to`,
        { sessionId, firstKeptEntryId: entry.firstKeptEntryId },
      );
    }
    return depth;
  }

  private isOnPathTo(sessionId: string, entryId: string, leafId: string | null): boolean {
    if (leafId === null) return false;
    const target = this.writer.pathColumns(sessionId, entryId);
    return target !== undefined && ancestorAtDepth(this.sql, sessionId, leafId, target.depth) === entryId;
  }

  private replay(sessionId: string, record: AppendResultRecord): AppendOutcome {
    const entries = record.entryIds.map((id) => {
      const row = this.sql.get<EntryRow>(SELECT_ENTRY).get(sessionId, id);
      if (!row) throw new Error(`stored result of a request refers to entry "${id}", which session "${sessionId}" no longer has`);
      return toStoredEntry(row);
    });
    const outcome: AppendOutcome = { status: "replayed", entries, leafId: record.leafId };
    if (record.extra !== undefined) outcome.extra = record.extra;
    return outcome;
  }
}

/** The outcome with each entry's seq read (engines that pipeline give it once the transaction has answered). */
function settled(outcome: AppendOutcome): AppendOutcome {
  if (outcome.status !== "stale") {
    for (const stored of outcome.entries) Object.defineProperty(stored, "seq", { value: stored.seq, enumerable: true, writable: true });
  }
  return outcome;
}

export const invalidEntry = (message: string, data: Record<string, unknown>) => new AppError("invalid_entry", message, data);

/** ms of an ISO time from the IdSource (injectable in tests), or the clock when it does not parse. */
export function timeMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? Date.now() : ms;
}
