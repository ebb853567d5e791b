/**
 * The two ends of `base-context migrate`: the SQLite file (`--db`, else the user's) and the
 * `--to`/`--from` URL (PostgreSQL, or a `file:` URL naming another SQLite file). Checked before
 * anything is opened, so a wrong argument never creates, migrates or changes a database.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "./args.js";
import { CliError } from "./cli-error.js";
import { displayPath } from "./output.js";
import type { MigrationStore } from "../sessions/migrate.js";
import { redactStoreUrl, StoreOpenError } from "../sessions/store-display.js";

export type Endpoint =
  | { kind: "postgres"; url: string; shown: string }
  | { kind: "sqlite"; path: string; shown: string };

const URL_FORMS = "a postgres:// URL (postgres://user:password@host:5432/database) or a file: URL of a SQLite file";

/** A URL as it may be printed: the password replaced by `***`. */
export const redactUrl = redactStoreUrl;

export function parseEndpointUrl(option: string, text: string): Endpoint {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--${option} "${redactUrl(text)}" is not a URL: give ${URL_FORMS}`);
  }
  if (url.protocol === "postgres:" || url.protocol === "postgresql:") {
    return { kind: "postgres", url: text, shown: redactUrl(text) };
  }
  if (url.protocol === "file:") {
    let path: string;
    try {
      path = fileURLToPath(url);
    } catch (error) {
      throw new UsageError(`--${option} ${text}: ${(error as Error).message}`);
    }
    return sqliteEndpoint(path);
  }
  throw new UsageError(`--${option}: unknown scheme "${url.protocol}" in "${redactUrl(text)}": give ${URL_FORMS}`);
}

export function sqliteEndpoint(path: string): Endpoint {
  const absolute = resolve(path);
  return { kind: "sqlite", path: absolute, shown: displayPath(absolute) };
}

/** The source must exist (a copy never creates its source); a SQLite target may be created. */
export function checkEndpoints(source: Endpoint, target: Endpoint): void {
  if (source.kind === "sqlite") {
    if (!existsSync(source.path)) {
      throw new CliError(`no such database file: ${source.path}`, [
        "Give the SQLite file to copy with --db <path>; without it, the one the daemon uses (BASE_CONTEXT_DB, else $BASE_CONTEXT_HOME/sessions.db).",
      ]);
    }
    if (!statSync(source.path).isFile()) throw new CliError(`${source.path} is not a file`);
  }
  if (sameEndpoint(source, target)) {
    throw new UsageError(`the source and the target are the same database (${source.shown}): nothing to copy`);
  }
}

function sameEndpoint(a: Endpoint, b: Endpoint): boolean {
  if (a.kind === "sqlite" && b.kind === "sqlite") return canonicalPath(a.path) === canonicalPath(b.path);
  if (a.kind === "postgres" && b.kind === "postgres") return sameServerDatabase(a.url, b.url);
  return false;
}

function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function sameServerDatabase(a: string, b: string): boolean {
  const key = (text: string) => {
    const url = new URL(text);
    return `${url.hostname}:${url.port || "5432"}${url.pathname}`;
  };
  return key(a) === key(b);
}

/** Opens the store at an endpoint (creating and migrating its schema if needed); a CliError saying what to try if that fails. */
export async function openEndpoint(endpoint: Endpoint): Promise<MigrationStore> {
  const { openMigrationStore } = await import("../sessions/migrate.js");
  const { databaseFailure, storeFailure } = await import("./open-daemon.js");
  const location =
    endpoint.kind === "sqlite"
      ? ({ engine: "sqlite", path: endpoint.path, display: endpoint.path } as const)
      : ({ engine: "postgres", url: endpoint.url, display: endpoint.shown } as const);
  try {
    return await openMigrationStore(location);
  } catch (error) {
    if (endpoint.kind === "sqlite") throw databaseFailure(endpoint.path, error instanceof StoreOpenError ? error.cause : error);
    throw storeFailure(error instanceof StoreOpenError ? error : new StoreOpenError(location, error));
  }
}
