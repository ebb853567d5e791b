/**
 * Every session of one store copied into another (`base-context migrate`, docs/storage.md#migrating).
 * Sessions already on the target identically are skipped, so running it again after an
 * interruption copies only what is missing; one that differs there is a conflict, left alone
 * unless `overwrite`. A failure of one session (a conflict, a copy that does not verify) does not
 * stop the others; a failure of a store itself (a lost connection, a full disk) stops the run.
 */
import { AppError } from "../errors.js";
import { PostgresUnavailableError } from "../store/postgres/sync-postgres.js";
import type { StoreLocation } from "../store/store-location.js";
import { copySession, type CopyStore, type SessionOutcome } from "./copy-session.js";

export type { CopyStore, SessionOutcome } from "./copy-session.js";

export interface MigrateOptions {
  overwrite?: boolean;
  /** Entries per read page and per write transaction (default 500). */
  pageSize?: number;
  /** Aborted: the session being copied is removed from the target and the run stops. */
  signal?: AbortSignal;
  /** Before each session: its position (1-based) and the number of sessions. */
  onStart?: (sessionId: string, index: number, total: number) => void;
  /** After each session. */
  onSession?: (outcome: SessionOutcome, index: number, total: number) => void;
  /** While a session is copied, after each page. */
  onEntries?: (sessionId: string, copied: number, total: number) => void;
}

export interface MigrateReport {
  sessions: SessionOutcome[];
  copied: number;
  skipped: number;
  conflicts: number;
  failed: number;
  /** Sessions not tried because the run stopped first. */
  notAttempted: number;
  /** Why the run stopped before the last session (interrupted, a store failed), if it did. */
  stopped?: { reason: string; interrupted: boolean };
}

const LIST_PAGE = 500;

export async function migrateSessions(source: CopyStore, target: CopyStore, options: MigrateOptions = {}): Promise<MigrateReport> {
  const ids = listAllSessionIds(source);
  const report: MigrateReport = { sessions: [], copied: 0, skipped: 0, conflicts: 0, failed: 0, notAttempted: 0 };
  const signal = options.signal;
  const between = async () => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    signal?.throwIfAborted();
  };
  for (let index = 0; index < ids.length; index++) {
    const sessionId = ids[index]!;
    if (signal?.aborted) {
      report.stopped = { reason: "interrupted", interrupted: true };
      report.notAttempted = ids.length - index;
      break;
    }
    options.onStart?.(sessionId, index + 1, ids.length);
    let outcome: SessionOutcome;
    try {
      outcome = await copySession(source, target, sessionId, {
        overwrite: options.overwrite ?? false,
        pageSize: options.pageSize ?? 500,
        between,
        ...(options.onEntries ? { onEntries: (copied, total) => options.onEntries!(sessionId, copied, total) } : {}),
      });
    } catch (error) {
      const interrupted = signal?.aborted === true;
      const reason = interrupted ? "interrupted" : storeFailure(error);
      outcome = { status: "failed", sessionId, reason: interrupted ? "interrupted; nothing of it was left on the target" : reason };
      record(report, outcome);
      options.onSession?.(outcome, index + 1, ids.length);
      // A session's own problem (an AppError) does not stop the others; a store's does.
      if (interrupted || !(error instanceof AppError)) {
        report.stopped = { reason, interrupted };
        report.notAttempted = ids.length - index - 1;
        break;
      }
      continue;
    }
    record(report, outcome);
    options.onSession?.(outcome, index + 1, ids.length);
  }
  return report;
}

/** A store's own failure, worded for the report (a lost connection says so). */
function storeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof PostgresUnavailableError) return `a database could not be reached or its connection was lost (${message})`;
  return message;
}

function record(report: MigrateReport, outcome: SessionOutcome): void {
  report.sessions.push(outcome);
  if (outcome.status === "copied") report.copied++;
  else if (outcome.status === "skipped") report.skipped++;
  else if (outcome.status === "conflict") report.conflicts++;
  else report.failed++;
}

/** Every complete session's id, listed before copying begins (appends reorder the listing). */
function listAllSessionIds(store: CopyStore): string[] {
  const ids: string[] = [];
  let after: { modifiedMs: number; id: string } | undefined;
  for (;;) {
    const page = store.listSessions({ limit: LIST_PAGE, ...(after ? { after } : {}) });
    for (const session of page) ids.push(session.id);
    if (page.length < LIST_PAGE) return ids;
    const last = page[page.length - 1]!;
    after = { modifiedMs: Date.parse(last.modifiedAt), id: last.id };
  }
}

/** A store migrate reads or writes, closed when the run ends. */
export type MigrationStore = CopyStore & { close(): Promise<void> };

/**
 * The store at a location migrate was given (its schema created or migrated when needed): the
 * SQLite file (created with its folder when missing; a source is checked to exist first) or a
 * PostgreSQL database. StoreOpenError when it cannot be opened.
 */
export async function openMigrationStore(location: StoreLocation): Promise<MigrationStore> {
  const { openStore } = await import("../store/index.js");
  return openStore({ location, applicationName: "base-context migrate" });
}
