/**
 * The narrow statement interface every store/ module talks to (docs/storage.md): one SQL text,
 * run with positional `?` parameters or one object for `@name` placeholders. Two implementations:
 * SQLite's (store/sqlite/sqlite-statements.ts: better-sqlite3 statements, compiled once per
 * connection and reused) and PostgreSQL's (store/postgres/pg-statements.ts: `$n` placeholders,
 * named prepared statements).
 *
 * Only what both engines can do is here: no `lastInsertRowid` (an INSERT that needs the new seq
 * goes through `StoreEngine.insertReturningSeq`), no iterators (a statement's rows are read
 * whole), no `raw`/`expand`.
 */
export interface SqlStatement<Row = unknown> {
  /** The first row, or undefined. */
  get(...params: unknown[]): Row | undefined;
  all(...params: unknown[]): Row[];
  /** `changes`: rows inserted, updated or deleted (not counting trigger effects). */
  run(...params: unknown[]): { changes: number };
  /** The same statement returning each row's first column (`Row` is then that column's type). */
  pluck(): SqlStatement<Row>;
}

export interface SqlStatements {
  /** The statement for this SQL text (the text is the cache key, so pass constants). */
  get<Row = unknown>(sql: string): SqlStatement<Row>;
}
