export { BaseContextSession, type BaseContextSessionOptions, type LastCompaction } from "./session.js";
export { BaseContextError, DaemonGoneError, type BaseContextErrorCode } from "./errors.js";
export type { DaemonOptions } from "./link.js";
export { ITEMS_FIELD } from "./items.js";
