/**
 * Prepared statements, compiled once per connection and reused: preparing costs more than
 * running a small statement, and appends run a handful of them each.
 */
import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";

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
