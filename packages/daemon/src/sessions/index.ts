/** sessions/: the SessionsApi implementation and the reads other parts of the daemon build on. */
export {
  SessionService,
  type AppendEvent,
  type CountedAppended,
  type CountedAppendOutcome,
  type SessionServiceOptions,
} from "./service.js";
export type { ContextPath } from "./context-path.js";
export type { CountedEntry } from "./token-ledger.js";
export type { ImportOptions } from "./import.js";
export type { ImportResult } from "./import-run.js";
export type { SkippedLine } from "./import-gaps.js";
export { ImportStates } from "./import-state.js";
export type { SessionsApi } from "./api.js";
export { piSessionMessages } from "./formats/pi/messages.js";
export type { SessionRecords } from "./session-records.js";
export { SessionLocks } from "./session-locks.js";
// What compaction/ and tree/ work with of the store (rows, jobs, process owners): store/ is reached only through sessions/.
export {
  currentOwner,
  isOwnerAlive,
  isProcessAlive,
  isThisProcess,
  RUNNING_JOB_STATES,
  systemProbe,
  type AppendOutcome,
  type CompactionJobs,
  type JobRecord,
  type JobState,
  type JobUpdate,
  type OwnerProbe,
  type ProcessOwner,
  type StoreOwners,
  type SessionRecord,
  type StoredEntry,
} from "../store/index.js";
