/**
 * The narrow statement interface every store/ module talks to (docs/storage.md): one SQL text,
 * run with positional `?` parameters or one object for `@name` placeholders. Two implementations:
 * SQLite's below (better-sqlite3 statements, compiled once per connection and reused: preparing
 * costs more than running a small statement, and appends run a handful of them each) and
 * PostgreSQL's (store/postgres/pg-statements.ts: `$n` placeholders, named prepared statements).
 *
 * Only what both engines can do is here: no `lastInsertRowid` (an INSERT that needs the new seq
 * goes through `StoreEngine.insertReturningSeq`), no iterators (a statement's rows are read
 * whole), no `raw`/`expand`.
 */
import type { Statement } from "better-sqlite3";
import type { Db } from "./sqlite/open-database.js";

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

/** SQLite's statements: better-sqlite3 statements, wrapped once per SQL text. */
export class Statements implements SqlStatements {
  private readonly cache = new Map<string, SqliteStatement<unknown>>();

  constructor(readonly db: Db) {}

  get<Row = unknown>(sql: string): SqlStatement<Row> {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = new SqliteStatement(this.db.prepare(sql));
      this.cache.set(sql, statement);
    }
    return statement as SqlStatement<Row>;
  }
}

/**
 * A thin wrapper, cached with its statement: better-sqlite3's `pluck()` switches the statement
 * itself, which a cached, shared statement must not do. The plucked twin is prepared once.
 */
class SqliteStatement<Row> implements SqlStatement<Row> {
  private plucked: SqliteStatement<unknown> | undefined;

  constructor(private readonly statement: Statement) {}

  get(...params: unknown[]): Row | undefined {
    return this.statement.get(...params) as Row | undefined;
  }

  all(...params: unknown[]): Row[] {
    return this.statement.all(...params) as Row[];
  }

  run(...params: unknown[]): { changes: number } {
    return this.statement.run(...params);
  }

  pluck(): SqlStatement<Row> {
    this.plucked ??= new SqliteStatement(this.statement.database.prepare(this.statement.source).pluck());
    return this.plucked as SqlStatement<Row>;
  }
}
