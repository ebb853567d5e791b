/**
 * PostgreSQL for the engine modules' unit tests: one test server per suite (test/support/postgres.ts),
 * a fresh migrated database per test, connections closed and databases dropped after each test.
 */
import { afterEach } from "vitest";
import { startPostgres, type PostgresServer } from "../../../../../test/support/postgres.js";
import { useSuiteResource } from "../../../../../test/support/suite-resource.js";
import { migratePostgres } from "./schema.js";
import { SyncPostgres } from "./sync-postgres.js";

export interface TestDatabases {
  readonly server: PostgresServer;
  /** A new database (migrated unless `migrated: false`), its URL and a connection to it. */
  open(options?: { migrated?: boolean }): Promise<{ url: string; db: SyncPostgres }>;
  /** Another connection to a database opened here (closed after the test). */
  connect(url: string): SyncPostgres;
}

export function usePostgresDatabases(): TestDatabases {
  const server = useSuiteResource(startPostgres, (started) => started.stop(), "the test PostgreSQL server");
  const connections: SyncPostgres[] = [];
  afterEach(async () => {
    for (const db of connections.splice(0)) await db.close();
    await server.dropDatabases();
  });
  const connect = (url: string) => {
    const db = SyncPostgres.open(url, { applicationName: "base-context-test" });
    connections.push(db);
    return db;
  };
  return {
    server,
    connect,
    async open(options = {}) {
      const url = await server.createDatabase();
      const db = connect(url);
      if (options.migrated !== false) migratePostgres(db);
      return { url, db };
    },
  };
}
