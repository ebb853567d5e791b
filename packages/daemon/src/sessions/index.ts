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
export type { ImportOptions, ImportResult, SkippedLine } from "./import.js";
export type { SessionsApi } from "./api.js";
export { piSessionMessages } from "./pi-messages.js";
