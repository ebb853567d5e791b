/**
 * Prepared statements, compiled once per connection and reused: preparing costs more than
 * running a small statement, and appends run a handful of them each.
 */
import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";

/**
 * One SQL statement of the store, as both engines run it (docs/architecture.md): parameters are
 * positional `?` values, or one object whose keys fill `@name` placeholders.
 */
export interface SqlStatement<Row = unknown> {
  /** The first row, or undefined when there is none. */
  get(...params: unknown[]): Row | undefined;
  all(...params: unknown[]): Row[];
  run(...params: unknown[]): { changes: number };
  /** The same statement returning each row's first column (`Row` is then that column's type). */
  pluck(): SqlStatement<Row>;
}

/** Statements by SQL text, prepared once and reused (pass constants: the text is the cache key). */
export interface SqlStatements {
  get<Row = unknown>(sql: string): SqlStatement<Row>;
}

export class Statements {
  private readonly cache = new Map<string, Statement>();

  constructor(readonly db: Db) {}

  /** The statement for this SQL text (the text is the cache key, so pass constants). */
  get<Row = unknown>(sql: string): Statement<unknown[], Row> {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement as Statement<unknown[], Row>;
  }
}
