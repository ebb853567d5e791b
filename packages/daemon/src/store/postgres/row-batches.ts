/**
 * What a write transaction writes of entries, sent as one statement instead of four an entry:
 * inside a transaction, `EntryWriter.insert` (through the engine) and the search index add rows
 * here, the session row's tally joins them (`tallyWithEntries`), and so does the check of an
 * append sent without reading first (`expectLeaf`). They go to the server as one call of
 * `bc_write_entries` (postgres/schema.ts), with a request's first result when one is stored
 * with them (`requestResultWithEntries`), just before the transaction's next other statement
 * (or its commit), so the order of everything the transaction does is kept. The session's write
 * lock (`lockSession`, taken by every write transaction before its work) goes out the same way,
 * in that call when it is the transaction's first statement, else alone just before the first.
 * An append is then one statement, and a batch of entries (appendMany, an import batch) one
 * whatever its size. Each entry's `seq` comes back with the call (`id, seq` rows) and is read
 * lazily (InsertedRow).
 */
import type { RequestResultRow, SessionTally } from "../rows.js";
import { textArrayValue } from "./binary-arrays.js";
import { ENTRY_COLUMN_ORDER, type EntryInsert } from "./entry-insert.js";
import type { SentStatement, SyncPostgres } from "./sync-postgres.js";
import { SEARCH_CONFIG, SESSION_LOCK_SPACE } from "./schema.js";

/**
 * bc_write_entries' parameters: the session to lock (1), the expectation (3), the entries'
 * columns, the search rows (3), the tally (6), the request's result (5).
 */
const WRITE_ENTRIES = `
  SELECT id, seq FROM bc_write_entries($1, $2, $3, CAST($4 AS BIGINT),
    ${ENTRY_COLUMN_ORDER.map(([, type], index) => `CAST($${index + 5} AS ${type}[])`).join(", ")},
    ${[0, 1, 2].map((index) => `CAST($${ENTRY_COLUMN_ORDER.length + 5 + index} AS TEXT[])`).join(", ")},
    ${["TEXT", "TEXT", "INTEGER", "BIGINT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "BIGINT"].map((type, index) => `CAST($${ENTRY_COLUMN_ORDER.length + 8 + index} AS ${type})`).join(", ")})`;
const WRITE_ENTRIES_NAME = "bc_write_entries";
const LOCK_SESSION = "SELECT pg_advisory_xact_lock($1, hashtext($2))";
const LOCK_SESSION_NAME = "bc_lock_session";
// Search rows of entries already sent (imports write them apart): the seq found by the entry's id.
const INSERT_TEXTS = `
  INSERT INTO entries_fts (seq, session_id, vector)
  SELECT e.seq, e.session_id, to_tsvector('${SEARCH_CONFIG}', v.text)
  FROM unnest(CAST($1 AS TEXT[]), CAST($2 AS TEXT[]), CAST($3 AS TEXT[])) AS v(session_id, id, text)
  JOIN entries e ON e.session_id = v.session_id AND e.id = v.id`;
const INSERT_TEXTS_NAME = "bc_insert_entry_texts";
const EXPECT_LEAF = "SELECT bc_expect_leaf($1, $2, $3)";
const EXPECT_LEAF_NAME = "bc_expect_leaf";

/** A search row to write: the entry's words (postgres/search.ts). */
export interface EntryText {
  sessionId: string;
  id: string;
  text: string;
}

/** The leaf an append sent without reading first expects (LeafExpectations.expect). */
interface ExpectedLeaf {
  sessionId: string;
  id: string;
  seq: number;
}

export class RowBatches {
  private entries: EntryInsert[] = [];
  private texts: EntryText[] = [];
  private expected: ExpectedLeaf | undefined;
  /** The session whose write lock goes out with the next statement. */
  private lock: string | undefined;
  private tally: { sessionId: string; tally: SessionTally } | undefined;
  private request: RequestResultRow | undefined;
  private flushing = false;
  /** Search rows are kept back (`takeTexts`) instead of joining the transaction: written apart. */
  holdTexts = false;
  /** The batch the buffered entries go out in: their seqs come from its answer. */
  private batch: { sent?: SentStatement } = {};

  constructor(private readonly db: SyncPostgres) {
    db.beforeStatement = () => this.flush();
    db.onTransactionEnd = () => this.discard();
  }

  /** Adds an entry row; `seq` of the result waits for the batch to be sent and answered. */
  insertEntry(row: EntryInsert): { readonly seq: number } {
    this.entries.push(row);
    const batch = this.batch;
    const flush = () => this.flush();
    let seq: number | undefined;
    return {
      get seq(): number {
        if (seq !== undefined) return seq;
        if (!batch.sent) flush();
        const found = batch.sent?.rows.find((returned) => returned.id === row.id);
        if (found === undefined) throw new Error(`the entry "${row.id}" was not inserted`);
        seq = Number(found.seq);
        return seq;
      },
    };
  }

  /**
   * Takes `sessionId`'s write lock (`pg_advisory_xact_lock`) before the transaction's next
   * statement: in it when that is the call that writes entries, else alone just before it. What
   * was buffered before goes first, to keep the order.
   */
  lockSession(sessionId: string): void {
    if (this.lock !== undefined || this.entries.length > 0 || this.expected) this.flush();
    this.lock = sessionId;
  }

  /** Adds a search row for an entry inserted in this transaction (before or in this batch). */
  indexText(sessionId: string, id: string, text: string): void {
    this.texts.push({ sessionId, id, text });
  }

  /**
   * The check that `leaf` is still the session's leaf, sent with the entries that follow (they
   * are written only if it holds). What was buffered before it goes first, to keep the order.
   */
  expectLeaf(sessionId: string, leaf: { id: string; seq: number }): void {
    if (this.entries.length > 0 || this.expected) this.flush();
    this.expected = { sessionId, id: leaf.id, seq: leaf.seq };
  }

  /** Takes the session row's tally, written after the buffered entries; false when none is buffered. */
  tallyWithEntries(sessionId: string, tally: Readonly<SessionTally>): boolean {
    if (this.entries.length === 0 || this.tally) return false;
    this.tally = { sessionId, tally: { ...tally } };
    return true;
  }

  /** Takes a request's first result, written with the buffered entries; false when none is buffered. */
  requestResultWithEntries(row: RequestResultRow): boolean {
    if (this.entries.length === 0 || this.request) return false;
    this.request = { ...row };
    return true;
  }

  /** Sends what is buffered: one call when there are entries, else the lock, the check or the search rows alone. */
  flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    try {
      const texts = this.holdTexts ? [] : this.texts;
      if (!this.holdTexts) this.texts = [];
      if (this.entries.length > 0) {
        this.batch.sent = this.db.send(WRITE_ENTRIES, this.writeParams(texts), WRITE_ENTRIES_NAME, true);
        this.batch = {};
        this.entries = [];
      } else {
        if (this.lock !== undefined) this.db.send(LOCK_SESSION, [SESSION_LOCK_SPACE, this.lock], LOCK_SESSION_NAME);
        const expected = this.expected;
        if (expected) this.db.send(EXPECT_LEAF, [expected.sessionId, expected.id, expected.seq], EXPECT_LEAF_NAME);
        if (texts.length > 0) this.sendTexts(texts);
      }
      this.lock = undefined;
      this.expected = undefined;
      this.tally = undefined;
      this.request = undefined;
    } finally {
      this.flushing = false;
    }
  }

  private writeParams(texts: readonly EntryText[]): unknown[] {
    const expected = this.expected;
    const tally = this.tally;
    const request = this.request;
    return [
      this.lock ?? null,
      expected?.sessionId ?? null,
      expected?.id ?? null,
      expected?.seq ?? null,
      ...ENTRY_COLUMN_ORDER.map(([column, type]) => {
        const values = this.entries.map((row) => row[column]);
        return type === "TEXT" ? textArrayValue(values as (string | null)[]) : values;
      }),
      ...textsValues(texts),
      tally?.sessionId ?? null,
      tally?.tally.leafId ?? null,
      tally?.tally.added ?? null,
      tally?.tally.modifiedMs ?? null,
      tally?.tally.name ?? null,
      tally?.tally.firstMessage ?? null,
      request?.sessionId ?? null,
      request?.requestId ?? null,
      request?.method ?? null,
      request?.result ?? null,
      request?.createdMs ?? null,
    ];
  }

  /** The search rows kept back while `holdTexts` was set. */
  takeTexts(): EntryText[] {
    const texts = this.texts;
    this.texts = [];
    return texts;
  }

  /** Sends search rows of entries already stored (in the open transaction). */
  sendTexts(texts: readonly EntryText[]): void {
    this.db.send(INSERT_TEXTS, textsValues(texts), INSERT_TEXTS_NAME);
  }

  private discard(): void {
    this.entries = [];
    this.texts = [];
    this.lock = undefined;
    this.expected = undefined;
    this.tally = undefined;
    this.request = undefined;
    this.batch = {};
  }
}

/** The search rows as the three `text[]` values the statements take (session ids, entry ids, words). */
function textsValues(texts: readonly EntryText[]): Buffer[] {
  return [
    textArrayValue(texts.map((text) => text.sessionId)),
    textArrayValue(texts.map((text) => text.id)),
    textArrayValue(texts.map((text) => text.text)),
  ];
}
