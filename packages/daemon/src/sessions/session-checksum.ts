/**
 * What makes two stored copies of a session the same (docs/storage.md#migrating): the session
 * row's fields, every entry's stored JSON in insertion order, and the labels. A SHA-256 over
 * them is the session's checksum. Token counts are not part of it: they are a cache of what the
 * entries say, filled in later by whichever daemon reads them (a copy keeps them, and the copy's
 * verification checks them separately).
 */
import { createHash, type Hash } from "node:crypto";
import type { SessionRecord } from "../store/index.js";

/** The stored rows a checksum reads: any store engine gives them (see migrate.ts's CopyStore). */
export interface ChecksumSource {
  entryRowPages(sessionId: string, pageSize?: number): Iterable<{ json: string; tokens: number | null }[]>;
  labels(sessionId: string): Map<string, string>;
}

export interface SessionChecksum {
  entryCount: number;
  /** SHA-256 (hex) over the row's fields, the entries' JSON in order and the labels. */
  checksum: string;
  /** The part over the entries and labels alone (comparable before the row is final). */
  entriesChecksum: string;
  /** Each entry's stored token count, in order. */
  tokens: (number | null)[];
}

/** The row's fields in a fixed order; headerExtra as its JSON text (the order of its keys counts). */
export function rowFields(session: SessionRecord): unknown[] {
  return [
    session.id,
    session.cwd,
    session.createdAt,
    session.parentSession ?? null,
    JSON.stringify(session.headerExtra),
    session.name ?? null,
    session.leafId,
    session.modifiedAt,
    session.entryCount,
    session.firstMessage ?? null,
  ];
}

export const ROW_FIELD_NAMES = [
  "id",
  "cwd",
  "createdAt",
  "parentSession",
  "headerExtra",
  "name",
  "leafId",
  "modifiedAt",
  "entryCount",
  "firstMessage",
] as const;

/** Hashes entries page by page as they go by (the copy hashes what it copies while copying it). */
export class EntriesHasher {
  private readonly hash: Hash = createHash("sha256");
  readonly tokens: (number | null)[] = [];

  add(row: { json: string; tokens: number | null }): void {
    // Length-prefixed: no JSON text can make two different lists hash alike.
    this.hash.update(`${Buffer.byteLength(row.json, "utf8")}:`);
    this.hash.update(row.json);
    this.tokens.push(row.tokens);
  }

  get count(): number {
    return this.tokens.length;
  }

  /** Adds the labels and returns the hex digest (once). */
  finish(labels: ReadonlyMap<string, string>): string {
    const sorted = [...labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.hash.update(`labels:${JSON.stringify(sorted)}`);
    return this.hash.digest("hex");
  }
}

/** Combines the row's fields with the entries' digest. */
export function sessionChecksum(session: SessionRecord, entriesChecksum: string): string {
  return createHash("sha256").update(JSON.stringify(rowFields(session))).update(entriesChecksum).digest("hex");
}

/** Reads the session's entries and labels from `store` and checksums them with `session`'s row. */
export function checksumStored(store: ChecksumSource, session: SessionRecord, pageSize?: number): SessionChecksum {
  const entriesChecksum = checksumEntries(store, session.id, pageSize);
  return { ...entriesChecksum, checksum: sessionChecksum(session, entriesChecksum.entriesChecksum) };
}

/** The entries' and labels' checksum alone (also of a session still being imported). */
export function checksumEntries(
  store: ChecksumSource,
  sessionId: string,
  pageSize?: number,
): { entryCount: number; entriesChecksum: string; tokens: (number | null)[] } {
  const hasher = new EntriesHasher();
  for (const page of store.entryRowPages(sessionId, pageSize)) for (const row of page) hasher.add(row);
  return { entryCount: hasher.count, entriesChecksum: hasher.finish(store.labels(sessionId)), tokens: hasher.tokens };
}
