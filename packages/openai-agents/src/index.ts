export { BaseContextSession, type BaseContextSessionOptions, type LastCompaction } from "./session.js";
export { DaemonGoneError, type DaemonOptions } from "./link.js";
export { ITEMS_FIELD } from "./items.js";
