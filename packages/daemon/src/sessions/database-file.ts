/**
 * The database file itself, for `doctor` and the CLI's start-up check: whether it opens (created
 * and migrated if needed) and which schema version this build writes. Outside sessions/ the store
 * is reached only through here and SessionService (docs/architecture.md#layers-and-the-rules-that-check-them).
 */
export { openDatabase } from "../store/sqlite/open-database.js";
export { DatabaseTooNewError } from "../store/database-too-new.js";
export { SCHEMA_VERSION } from "../store/sqlite/schema.js";
