/** The store: the only part of the daemon that knows SQL. */
export {
  SessionStore,
  type AppendedEntries,
  type ContextPathRows,
  type KnownContextPath,
  type SessionStoreOptions,
} from "./session-store.js";
export { openStore, type OpenStoreOptions } from "./open-store.js";
export {
  postgresLocation,
  redactStoreUrl,
  STORE_URL_ENV,
  storeLocation,
  StoreOpenError,
  StoreUrlError,
  type StoreLocation,
  type StoreLocationInputs,
} from "./store-location.js";
export type { EngineKind, SearchIndex, StoreEngine, StoreOwners } from "./store-engine.js";
export { SqliteEngine, processOwners } from "./sqlite/sqlite-engine.js";
export { timeMs, type AppendOutcome, type AppendRequest } from "./append.js";
export type { ImportBatchReport, ImportedEntry, ImportTarget } from "./import-writer.js";
export type { FinalSessionFields, ListQuery, NewSession } from "./sessions-table.js";
export type { SessionRecord, StoredEntry } from "./rows.js";
export type { StoredRequestResult } from "./request-results.js";
export { FIRST_MESSAGE_MAX_CHARS } from "./path-columns.js";
export { CompactionJobs, RUNNING_JOB_STATES, type JobRecord, type JobState, type JobUpdate, type NewJob } from "./compaction-jobs.js";
export {
  currentOwner,
  isOwnerAlive,
  isProcessAlive,
  isThisProcess,
  processStartIdentity,
  systemProbe,
  type OwnerProbe,
  type ProcessOwner,
} from "./owner.js";
export { ftsQuery } from "./sqlite/search.js";
export type { SearchQuery, SessionMatch, SearchHitRow } from "./store-engine.js";
export { searchText } from "./search-text.js";
