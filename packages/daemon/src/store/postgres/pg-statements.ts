/**
 * The store's statements on PostgreSQL (`SqlStatements`, ../statements.ts): the SQL keeps
 * SQLite's `?` / `@name` placeholders, rewritten once per SQL text to `$n`, and each statement
 * runs as a named prepared statement (the `pg` driver prepares it once per connection; the name
 * comes from a hash of the text, so the same text always has the same name).
 */
import type * as Crypto from "node:crypto";
import { createRequire } from "node:module";
import type { SqlStatement, SqlStatements } from "../statements.js";
import { type RewrittenSql, rewritePlaceholders } from "./placeholders.js";
import type { SyncPostgres } from "./sync-postgres.js";

export class PgStatements implements SqlStatements {
  private readonly cache = new Map<string, PgStatement<unknown>>();

  constructor(readonly db: SyncPostgres) {}

  /** The statement for this SQL text (the text is the cache key, so pass constants). */
  get<Row = unknown>(sql: string): SqlStatement<Row> {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = new PgStatement(this.db, preparedStatement(sql), false);
      this.cache.set(sql, statement);
    }
    return statement as SqlStatement<Row>;
  }
}

interface Prepared extends RewrittenSql {
  /** The prepared statement's name: at most 63 bytes (PostgreSQL's identifier limit). */
  name: string;
}

/**
 * node:crypto, required when a first statement is named: every daemon loads this module with the
 * store, and one on SQLite (most) would load node:crypto for nothing, in the way of its first
 * request (docs/architecture.md#start-path-and-bundles).
 */
let crypto: typeof Crypto | undefined;

function preparedStatement(sql: string): Prepared {
  const rewritten = rewritePlaceholders(sql);
  crypto ??= createRequire(import.meta.url)("node:crypto") as typeof Crypto;
  const name = `bc_${crypto.createHash("sha256").update(rewritten.text).digest("hex").slice(0, 32)}`;
  return { ...rewritten, name };
}

class PgStatement<Row> implements SqlStatement<Row> {
  private plucked: PgStatement<Row> | undefined;

  constructor(
    private readonly db: SyncPostgres,
    private readonly prepared: Prepared,
    private readonly firstColumn: boolean,
  ) {}

  get(...params: unknown[]): Row | undefined {
    const rows = this.rows(params);
    return rows[0];
  }

  all(...params: unknown[]): Row[] {
    return this.rows(params);
  }

  /**
   * Inside a transaction the statement is sent without waiting (pipelined, sync-postgres.ts): a
   * failure is thrown by the transaction's next call that waits, and `changes` waits when read.
   */
  run(...params: unknown[]): { changes: number } {
    const { text, name } = this.prepared;
    const values = bindParameters(this.prepared, params);
    if (this.db.inTransaction) return this.db.send(text, values, name);
    return { changes: this.db.query(text, values, name).rowCount };
  }

  pluck(): SqlStatement<Row> {
    if (this.firstColumn) return this;
    this.plucked ??= new PgStatement<Row>(this.db, this.prepared, true);
    return this.plucked;
  }

  private rows(params: unknown[]): Row[] {
    const { rows } = this.execute(params);
    if (!this.firstColumn) return rows as Row[];
    return rows.map((row) => Object.values(row)[0] as Row);
  }

  private execute(params: unknown[]): { rows: Record<string, unknown>[]; rowCount: number } {
    const { text, name } = this.prepared;
    return this.db.query(text, bindParameters(this.prepared, params), name);
  }
}

/**
 * The `$n` values from the arguments as better-sqlite3 takes them: the positional values in
 * order, and at most one plain object for the named ones (anywhere among them).
 */
export function bindParameters(sql: RewrittenSql, args: readonly unknown[]): unknown[] {
  let named: Record<string, unknown> | undefined;
  const positional: unknown[] = [];
  for (const arg of args) {
    if (isPlainObject(arg) && sql.names.length > 0) {
      if (named) throw new TypeError("only one object of named parameters can be given");
      named = arg;
    } else {
      positional.push(arg);
    }
  }
  if (positional.length !== sql.positionalCount) {
    throw new RangeError(`the statement takes ${sql.positionalCount} positional parameter(s), ${positional.length} were given`);
  }
  if (sql.names.length > 0 && !named) throw new TypeError(`the statement takes named parameters (${sql.names.map((n) => `@${n}`).join(", ")}): pass an object`);
  return sql.sources.map((source) => {
    const value = typeof source === "number" ? positional[source] : namedValue(named!, source);
    return value === undefined ? null : value;
  });
}

function namedValue(named: Record<string, unknown>, name: string): unknown {
  if (!Object.hasOwn(named, name)) throw new RangeError(`missing named parameter "${name}"`);
  return named[name];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
