import { randomBytes, randomUUID } from "node:crypto";

/** Ids and time, injectable so tests can be deterministic. */
export interface IdSource {
  /** An entry id: 8 lowercase hex characters, as pi writes them. Uniqueness is checked by the store. */
  entryId(): string;
  sessionId(): string;
  /** ISO-8601 timestamp for a new entry. */
  now(): string;
}

export const defaultIds: IdSource = {
  entryId: () => randomBytes(4).toString("hex"),
  sessionId: () => randomUUID(),
  now: () => new Date().toISOString(),
};
