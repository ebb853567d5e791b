/**
 * SQLite's side of the statement interface (../statements.ts): better-sqlite3 statements, compiled
 * once per connection and reused, since preparing costs more than running a small statement and
 * appends run a handful of them each.
 */
import type { Statement } from "better-sqlite3";
import type { SqlStatement, SqlStatements } from "../statements.js";
import type { Db } from "./open-database.js";

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
