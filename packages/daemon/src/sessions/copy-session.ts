/**
 * One session copied exactly from one store into another (docs/storage.md#migrating): written
 * through the store's import path, so the copy stays invisible on the target until it is complete
 * and verified, and a copy cut off midway (a killed process, a lost connection) is a half-import
 * the target removes when the next run (or any daemon) finds its owner gone.
 */
import type { SessionEntry } from "@base-context/protocol";
import { AppError } from "../errors.js";
import type { FinalSessionFields, ImportTarget, ImportedEntry, ListQuery, NewSession, SessionRecord } from "../store/index.js";
import {
  checksumEntries,
  checksumStored,
  EntriesHasher,
  ROW_FIELD_NAMES,
  rowFields,
  sessionChecksum,
  type ChecksumSource,
} from "./session-checksum.js";

/** What a copy needs of a store: the store contract's methods, whichever engine is behind them. */
export interface CopyStore extends ChecksumSource {
  listSessions(query: ListQuery): SessionRecord[];
  getSession(sessionId: string): SessionRecord | undefined;
  beginImport(session: NewSession): ImportTarget;
  deleteSession(sessionId: string): boolean;
}

export type SessionOutcome =
  | { status: "copied"; sessionId: string; name?: string; entryCount: number; checksum: string; replaced?: true }
  | { status: "skipped"; sessionId: string; name?: string; entryCount: number; checksum: string; reason: string }
  | {
      status: "conflict";
      sessionId: string;
      name?: string;
      source: { entryCount: number; checksum: string };
      target: { entryCount: number; checksum: string };
      difference: string;
    }
  | { status: "failed"; sessionId: string; name?: string; reason: string };

export interface CopyOptions {
  /** Replace a session that differs on the target (deleted there first) instead of reporting a conflict. */
  overwrite: boolean;
  /** Entries per read page and per write transaction. */
  pageSize: number;
  /** Called after each page written: entries copied so far of the session's total. */
  onEntries?: (copied: number, total: number) => void;
  /** Awaited between pages: lets signals and timers run; throws to stop (the copy is removed). */
  between: () => Promise<void>;
}

/** The copy does not match its source: it was removed from the target. */
class CopyMismatch extends Error {}

/** The source session changed while it was being read (a daemon writing to it). */
class SourceChanged extends Error {}

/** How many times a session that changes on the source while being copied is copied again. */
const COPY_ATTEMPTS = 3;

export async function copySession(source: CopyStore, target: CopyStore, sessionId: string, options: CopyOptions): Promise<SessionOutcome> {
  /** The target's differing version was deleted (--overwrite), in this attempt or an earlier one. */
  let replaced = false;
  for (let attempt = 1; ; attempt++) {
    const session = source.getSession(sessionId);
    if (!session) return { status: "skipped", sessionId, entryCount: 0, checksum: "", reason: "deleted from the source meanwhile" };
    const named = session.name !== undefined ? { name: session.name } : {};
    try {
      const existing = target.getSession(sessionId);
      if (existing) {
        const here = checksumStored(source, session, options.pageSize);
        const there = checksumStored(target, existing, options.pageSize);
        if (here.checksum === there.checksum) {
          return { status: "skipped", sessionId, ...named, entryCount: here.entryCount, checksum: here.checksum, reason: "identical on the target" };
        }
        if (!options.overwrite) {
          return {
            status: "conflict",
            sessionId,
            ...named,
            source: { entryCount: here.entryCount, checksum: here.checksum },
            target: { entryCount: there.entryCount, checksum: there.checksum },
            difference: describeDifference(source, target, session, existing, options.pageSize),
          };
        }
        target.deleteSession(sessionId);
        replaced = true;
      }
      const copied = await copyOnce(source, target, session, options);
      const { entryCount, checksum } = copied;
      return { status: "copied", sessionId, ...named, entryCount, checksum, ...(replaced ? { replaced: true } : {}) };
    } catch (error) {
      if (error instanceof SourceChanged && attempt < COPY_ATTEMPTS) continue;
      if (error instanceof SourceChanged) {
        return {
          status: "failed",
          sessionId,
          ...named,
          reason: `it changed on the source during each of ${COPY_ATTEMPTS} attempts (${error.message}); stop what writes to it and run again`,
        };
      }
      if (error instanceof CopyMismatch) return { status: "failed", sessionId, ...named, reason: error.message };
      if (error instanceof AppError && error.code === "session_exists") {
        return { status: "failed", sessionId, ...named, reason: "another process is writing it on the target (an import or another migrate); run again when it is done" };
      }
      throw error;
    }
  }
}

async function copyOnce(
  source: CopyStore,
  target: CopyStore,
  session: SessionRecord,
  options: CopyOptions,
): Promise<{ entryCount: number; checksum: string }> {
  const importing = target.beginImport(newSessionOf(session));
  let finished = false;
  try {
    const hasher = new EntriesHasher();
    for (const page of source.entryRowPages(session.id, options.pageSize)) {
      const batch: ImportedEntry[] = page.map((row) => {
        hasher.add(row);
        return { line: hasher.count, entry: JSON.parse(row.json) as SessionEntry, json: row.json, tokens: row.tokens };
      });
      const report = importing.insertBatch(batch);
      const refused = report.skipped[0] ?? report.rerooted[0];
      if (refused) {
        const why = "reason" in refused ? refused.reason : `its parent "${refused.parentId}" is not an earlier entry`;
        throw new CopyMismatch(`entry ${refused.line} could not be stored as it is on the source: ${why}`);
      }
      options.onEntries?.(hasher.count, session.entryCount);
      await options.between();
    }
    const sourceChecksum = hasher.finish(source.labels(session.id));
    const after = source.getSession(session.id);
    if (!after) throw new SourceChanged("it was deleted");
    if (JSON.stringify(rowFields(after)) !== JSON.stringify(rowFields(session)) || hasher.count !== session.entryCount) {
      throw new SourceChanged(`${session.entryCount} entries when the copy began, ${after.entryCount} after`);
    }

    // Verified while still invisible on the target: the entries and labels as the target stored them.
    const stored = checksumEntries(target, session.id, options.pageSize);
    if (stored.entryCount !== hasher.count || stored.entriesChecksum !== sourceChecksum) {
      throw new CopyMismatch(
        `the copy does not match: ${stored.entryCount} entries on the target, ${hasher.count} on the source, the checksums differ`,
      );
    }
    const lostCount = hasher.tokens.findIndex((tokens, index) => tokens !== null && stored.tokens[index] !== tokens);
    if (lostCount >= 0) throw new CopyMismatch(`entry ${lostCount + 1}'s token count was not copied`);

    const visible = importing.finish(finalFields(session));
    finished = true;
    const checksum = sessionChecksum(session, sourceChecksum);
    if (sessionChecksum(visible, stored.entriesChecksum) !== checksum) {
      // Visible for this moment only: the copy is ours, and wrong.
      target.deleteSession(session.id);
      throw new CopyMismatch(`the copy's session row differs (${differingFields(session, visible).join(", ")}); it was removed from the target`);
    }
    return { entryCount: hasher.count, checksum };
  } catch (error) {
    if (finished) throw error;
    try {
      importing.abort();
    } catch {
      // The target is unreachable: its half-import is removed by the next run (its owner is gone).
    }
    throw error;
  }
}

function newSessionOf(session: SessionRecord): NewSession {
  return {
    id: session.id,
    cwd: session.cwd,
    createdAt: session.createdAt,
    parentSession: session.parentSession,
    headerExtra: session.headerExtra,
    modifiedMs: Date.parse(session.modifiedAt),
  };
}

function finalFields(session: SessionRecord): FinalSessionFields {
  return {
    leafId: session.leafId,
    modifiedMs: Date.parse(session.modifiedAt),
    name: session.name ?? null,
    firstMessage: session.firstMessage ?? null,
  };
}

function differingFields(a: SessionRecord, b: SessionRecord): string[] {
  const left = rowFields(a);
  const right = rowFields(b);
  return ROW_FIELD_NAMES.filter((_, index) => JSON.stringify(left[index]) !== JSON.stringify(right[index]));
}

/** How the target's copy differs from the source's, in words: where the entries part ways, or which fields differ. */
function describeDifference(source: CopyStore, target: CopyStore, here: SessionRecord, there: SessionRecord, pageSize: number): string {
  const ours = rows(source, here.id, pageSize);
  const theirs = rows(target, there.id, pageSize);
  let same = 0;
  let sourceCount = 0;
  let targetCount = 0;
  let parted = false;
  for (;;) {
    const a = ours.next();
    const b = theirs.next();
    if (!a.done) sourceCount++;
    if (!b.done) targetCount++;
    if (a.done && b.done) break;
    if (!parted && !a.done && !b.done && a.value === b.value) same++;
    else parted = true;
  }
  const counts = `${sourceCount} entries on the source, ${targetCount} on the target`;
  if (same === sourceCount && same === targetCount) {
    const fields = differingFields(here, there);
    return fields.length > 0 ? `the same ${same} entries, but the session's ${fields.join(", ")} ${fields.length === 1 ? "differs" : "differ"}` : "the same entries, but the labels differ";
  }
  if (same === sourceCount) return `${counts}: the target has ${targetCount - same} more after the same ${same} (it was continued there)`;
  if (same === targetCount) return `${counts}: the source has ${sourceCount - same} more after the same ${same} (it was continued on the source since the copy)`;
  return `${counts}: they differ from entry ${same + 1} on`;
}

function* rows(store: CopyStore, sessionId: string, pageSize: number): Generator<string> {
  for (const page of store.entryRowPages(sessionId, pageSize)) for (const row of page) yield row.json;
}
