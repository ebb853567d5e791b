/**
 * Entry rows and their search rows written as a few multi-row statements instead of two
 * statements an entry: inside a transaction, `EntryWriter.insert` (through the engine) and the
 * search index add rows here, and they go to the server as one `INSERT … SELECT FROM unnest(…)`
 * each, just before the transaction's next other statement (or its commit), so the order of
 * everything the transaction does is kept. A batch of entries (appendMany, an import batch)
 * is then two statements whatever its size. Each entry's `seq` comes back with the batch
 * (`RETURNING id, seq`) and is read lazily (InsertedRow).
 */
import { ENTRY_COLUMN_ORDER, type EntryInsert } from "./entry-insert.js";
import type { SentStatement, SyncPostgres } from "./sync-postgres.js";
import { SEARCH_CONFIG } from "./schema.js";

const INSERT_ENTRIES = `
  INSERT INTO entries (${ENTRY_COLUMN_ORDER.map(([column]) => column).join(", ")})
  SELECT * FROM unnest(${ENTRY_COLUMN_ORDER.map(([, type], index) => `CAST($${index + 1} AS ${type}[])`).join(", ")})
  RETURNING id, seq`;
const INSERT_ENTRIES_NAME = "bc_insert_entries";
// The seq is the entry's, found by its id (the unique index), as postgres/search.ts does for one.
const INSERT_TEXTS = `
  INSERT INTO entries_fts (seq, session_id, vector)
  SELECT e.seq, e.session_id, to_tsvector('${SEARCH_CONFIG}', v.text)
  FROM unnest(CAST($1 AS TEXT[]), CAST($2 AS TEXT[]), CAST($3 AS TEXT[])) AS v(session_id, id, text)
  JOIN entries e ON e.session_id = v.session_id AND e.id = v.id`;
const INSERT_TEXTS_NAME = "bc_insert_entry_texts";

/** A search row to write: the entry's words (postgres/search.ts). */
export interface EntryText {
  sessionId: string;
  id: string;
  text: string;
}

export class RowBatches {
  private entries: EntryInsert[] = [];
  private texts: EntryText[] = [];
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

  /** Adds a search row for an entry inserted in this transaction (before or in this batch). */
  indexText(sessionId: string, id: string, text: string): void {
    this.texts.push({ sessionId, id, text });
  }

  /** Sends what is buffered: the entries first (the search rows join them). */
  flush(): void {
    if (this.flushing || (this.entries.length === 0 && this.texts.length === 0)) return;
    this.flushing = true;
    try {
      if (this.entries.length > 0) {
        const columns = ENTRY_COLUMN_ORDER.map(([column]) => this.entries.map((row) => row[column]));
        this.batch.sent = this.db.send(INSERT_ENTRIES, columns, INSERT_ENTRIES_NAME, true);
        this.batch = {};
        this.entries = [];
      }
      if (this.texts.length > 0 && !this.holdTexts) {
        const texts = this.texts;
        this.texts = [];
        this.sendTexts(texts);
      }
    } finally {
      this.flushing = false;
    }
  }

  /** The search rows kept back while `holdTexts` was set. */
  takeTexts(): EntryText[] {
    const texts = this.texts;
    this.texts = [];
    return texts;
  }

  /** Sends search rows of entries already stored (in the open transaction). */
  sendTexts(texts: readonly EntryText[]): void {
    this.db.send(INSERT_TEXTS, [texts.map((t) => t.sessionId), texts.map((t) => t.id), texts.map((t) => t.text)], INSERT_TEXTS_NAME);
  }

  private discard(): void {
    this.entries = [];
    this.texts = [];
    this.batch = {};
  }
}
