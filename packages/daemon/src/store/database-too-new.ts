/**
 * A database written by a newer base-context: its schema is past the steps this one knows. The
 * same error on both engines (store/sqlite/schema.ts, store/postgres/schema.ts), so the CLI and
 * the daemon tell it apart from a damaged database by `instanceof` alone.
 */
export class DatabaseTooNewError extends Error {
  override readonly name = "DatabaseTooNewError";
  constructor(
    readonly schemaVersion: number,
    knownVersion: number,
    what = "the database",
  ) {
    super(`${what} has schema version ${schemaVersion}, newer than this daemon understands (${knownVersion}); update base-context`);
  }
}
