/**
 * Which engine a daemon stores sessions in, and where (docs/storage.md, "choosing the engine"):
 * `BASE_CONTEXT_STORE_URL` wins, then `store.url` of the user's settings, then the SQLite file
 * (`BASE_CONTEXT_DB`, or sessions.db in the Base Context home). No driver is loaded here: the
 * CLI and the start-up error messages use it before anything is opened.
 */
import { defaultDatabasePath } from "../paths.js";

export type StoreLocation =
  | { engine: "sqlite"; path: string; /** For messages. */ display: string }
  | { engine: "postgres"; url: string; /** The URL with its password replaced by "***": for messages and logs. */ display: string };

export interface StoreLocationInputs {
  env?: NodeJS.ProcessEnv;
  /** `store.url` of the user's settings. */
  settingsUrl?: string | undefined;
  /** The SQLite file when no URL is set (default: `defaultDatabasePath(env)`). */
  path?: string | undefined;
}

/** An unusable store URL (not postgres://, or not a URL at all). */
export class StoreUrlError extends Error {
  constructor(
    message: string,
    /** The URL as given, its password redacted. */
    readonly display: string,
  ) {
    super(message);
    this.name = "StoreUrlError";
  }
}

export const STORE_URL_ENV = "BASE_CONTEXT_STORE_URL";

export function storeLocation(inputs: StoreLocationInputs = {}): StoreLocation {
  const env = inputs.env ?? process.env;
  const fromEnv = env[STORE_URL_ENV]?.trim();
  const url = fromEnv ? fromEnv : inputs.settingsUrl?.trim();
  if (url) return postgresLocation(url, fromEnv ? STORE_URL_ENV : "store.url");
  const path = inputs.path ?? defaultDatabasePath(env);
  return { engine: "sqlite", path, display: path };
}

/** A PostgreSQL location, or StoreUrlError saying what is wrong with the URL (never its password). */
export function postgresLocation(url: string, origin = "the store URL"): StoreLocation & { engine: "postgres" } {
  const display = redactStoreUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreUrlError(`${origin} is not a URL: ${display} (expected postgres://user@host:port/database)`, display);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new StoreUrlError(
      `${origin} must be a postgres:// URL, not ${display}; remove it to store sessions in the SQLite file`,
      display,
    );
  }
  if (parsed.hostname === "" && !parsed.searchParams.has("host")) {
    throw new StoreUrlError(`${origin} names no server: ${display} (expected postgres://user@host:port/database)`, display);
  }
  return { engine: "postgres", url, display };
}

/** The URL with its password (if any) replaced by "***". */
export function redactStoreUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    if (parsed.searchParams.has("password")) parsed.searchParams.set("password", "***");
    return parsed.toString();
  } catch {
    // Not a URL: whatever stands between a ":" and the last "@" may be a password.
    return url.replace(/:[^:@]*@(?=[^@]*$)/, ":***@").replace(/([?&]password=)[^&]*/i, "$1***");
  }
}

/** The store could not be opened: says where (a URL with its password redacted) and why. */
export class StoreOpenError extends Error {
  constructor(
    readonly location: StoreLocation,
    override readonly cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`cannot open the session store ${location.display}: ${withoutPassword(reason, location)}`);
    this.name = "StoreOpenError";
  }

  /** The SQLSTATE / SQLite / system error code of the cause, when it has one. */
  get code(): string | undefined {
    const code = (this.cause as { code?: unknown } | undefined)?.code;
    return typeof code === "string" ? code : undefined;
  }
}

/** A driver's message should not carry the password, but it is never passed on if one does. */
function withoutPassword(message: string, location: StoreLocation): string {
  if (location.engine !== "postgres") return message;
  let password = "";
  try {
    password = decodeURIComponent(new URL(location.url).password);
  } catch {
    // Not a URL: storeLocation refused it before anything was opened.
  }
  const redacted = message.split(location.url).join(redactStoreUrl(location.url));
  return password.length > 0 ? redacted.split(password).join("***") : redacted;
}
