/**
 * Which store engine the end-to-end suite runs on. vitest.config.ts runs the suite twice: as is
 * (SQLite, the daemon's file under its BASE_CONTEXT_HOME) and with BASE_CONTEXT_TEST_ENGINE=postgres,
 * where every daemon home gets a database of its own on the run's one PostgreSQL server
 * (test/support/postgres-setup.ts starts it) through BASE_CONTEXT_STORE_URL. Daemons that share a
 * home share its database, as they share its file on SQLite.
 *
 *   spawn(…, { env: { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home) } })
 *   describe.skipIf(onPostgres)("…", …) // with a comment saying why the test is about SQLite itself
 */
import { inject } from "vitest";
import { databasesOn, type Databases } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The superuser URL of the run's PostgreSQL server (the postgres project only). */
    postgresAdminUrl: string;
  }
}

export type TestEngine = "sqlite" | "postgres";

export const STORE_URL_ENV = "BASE_CONTEXT_STORE_URL";

export const testEngine: TestEngine = process.env.BASE_CONTEXT_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";

/** True in the postgres project: for `describe.skipIf(onPostgres)` on tests about the SQLite file itself. */
export const onPostgres = testEngine === "postgres";

let databases: Databases | undefined;
const urlByHome = new Map<string, string>();

function serverDatabases(): Databases {
  if (databases === undefined) {
    const adminUrl = inject("postgresAdminUrl");
    if (!adminUrl) throw new Error("BASE_CONTEXT_TEST_ENGINE=postgres but no server was started (run it through vitest.config.ts's postgres project)");
    databases = databasesOn(adminUrl);
  }
  return databases;
}

/**
 * The database of a daemon home (made on first use), or undefined on SQLite. Everything that
 * runs the daemon or the CLI for `home` uses it, so they all see the same sessions.
 */
export function storeUrlFor(home: string): string | undefined {
  if (!onPostgres) return undefined;
  let url = urlByHome.get(home);
  if (url === undefined) {
    url = serverDatabases().createSync();
    urlByHome.set(home, url);
  }
  return url;
}

/** `{ BASE_CONTEXT_STORE_URL: … }` for a daemon or CLI run on `home` in the postgres project; `{}` on SQLite. */
export function storeEnvFor(home: string): Record<string, string> {
  const url = storeUrlFor(home);
  return url === undefined ? {} : { [STORE_URL_ENV]: url };
}

/** Gives back the database of `home` (when the home itself is removed): dropped when the file ends. */
export function dropStoreFor(home: string): void {
  const url = urlByHome.get(home);
  if (url === undefined) return;
  urlByHome.delete(home);
  serverDatabases().dropSync(url);
}

/** Drops every database this test file made (test/support/engine-setup.ts calls it after the file). */
export function dropAllStores(): void {
  urlByHome.clear();
  databases?.dropAllSync();
}
