/**
 * Schema and migrations on PostgreSQL: the same tables and column names as the SQLite schema
 * (store/sqlite/schema.ts), so the store's portable SQL runs on both. The `schema_version` table holds
 * how many steps ran; a step is never edited once released — a change is a new step at the end.
 *
 * Types: `seq` is a BIGINT identity (insertion order, as SQLite's rowid), times in ms are BIGINT,
 * and JSON is TEXT holding the exact text that was appended (jsonb would reorder keys and lose
 * the byte-stable export).
 */
import { DatabaseTooNewError } from "../database-too-new.js";

/** What migrations need of a connection (`SyncPostgres` has it). */
export interface MigrationConnection {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[], name?: string): { rows: Row[]; rowCount: number };
  exec(script: string): void;
  begin(mode: "read" | "write"): void;
  commit(): void;
  rollback(): void;
}

export interface PostgresMigration {
  /** What the step does, for error messages. */
  readonly description: string;
  /** The step's DDL (it runs in the migration's transaction). */
  readonly script: string;
}

/**
 * The advisory lock (two-key form: this key space, 0) that serialises migrations, so several
 * daemons meeting a fresh database at once run each step exactly once. Other locks of the
 * daemon live in other key spaces (leases: postgres/lease.ts; sessions: one-key form).
 */
export const MIGRATION_LOCK_SPACE = 1_112_818_688; // an arbitrary key of this project's own
const MIGRATION_LOCK_KEY = 0;
/** Key space (first key of the two-key advisory lock) of per-session write locks (leases use +1). */
export const SESSION_LOCK_SPACE = MIGRATION_LOCK_SPACE + 2;

/** The SQLSTATE of `bc_expect_leaf` when the session's leaf is not the one expected. */
export const STALE_LEAF_SQLSTATE = "BCL01";
/** Raised by bc_expect_import: the session is no longer being imported by this daemon. */
export const IMPORT_LOST_SQLSTATE = "BCI01";

/** The text-search configuration of the full-text index (postgres/search.ts). */
export const SEARCH_CONFIG = "base_context_search";

export const postgresMigrations: readonly PostgresMigration[] = [
  {
    description: "sessions, entries with path columns, labels, request results, compaction jobs",
    script: `
      CREATE TABLE sessions (
        id                 TEXT PRIMARY KEY,
        cwd                TEXT NOT NULL,
        created_at         TEXT NOT NULL,
        -- ms since epoch: ISO strings of imported files do not always sort as text
        modified_ms        BIGINT NOT NULL,
        parent_session     TEXT,
        -- display name: the latest session_info name, else the header's name
        name               TEXT,
        -- header fields beyond id/cwd/createdAt/parentSession, in their original order (text, not jsonb)
        header_extra       TEXT NOT NULL DEFAULT '{}',
        leaf_id            TEXT,
        entry_count        INTEGER NOT NULL DEFAULT 0,
        first_message      TEXT,
        -- set while an import is running: the session is invisible until it completes
        import_started_ms  BIGINT,
        -- the import's owner (store/owner.ts; on this engine the start names a lease, postgres/lease.ts)
        import_owner_pid   INTEGER,
        import_owner_start TEXT
      );
      CREATE INDEX sessions_by_modified ON sessions (modified_ms DESC, id DESC);
      CREATE INDEX sessions_by_cwd ON sessions (cwd, modified_ms DESC, id DESC);

      -- seq is the insertion order. The path columns are computed from the parent at insert time
      -- so a context path never has to walk further up than it needs.
      CREATE TABLE entries (
        seq                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id         TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        id                 TEXT NOT NULL,
        parent_id          TEXT,
        type               TEXT NOT NULL,
        role               TEXT,
        depth              INTEGER NOT NULL,
        compaction_id      TEXT,
        first_kept_depth   INTEGER,
        model_change_id    TEXT,
        model_entry_id     TEXT,
        thinking_change_id TEXT,
        tokens             INTEGER,
        json               TEXT NOT NULL
      );
      CREATE UNIQUE INDEX entries_by_id ON entries (session_id, id);
      CREATE INDEX entries_in_order ON entries (session_id, seq);
      -- Entries whose token count is missing (imports; filled by a background backfill). Only
      -- those rows are in the index, so it stays small and costs nothing once the counts are in.
      CREATE INDEX entries_uncounted ON entries (session_id, seq) WHERE tokens IS NULL;

      -- The current label of each labelled entry (the latest label entry wins).
      CREATE TABLE labels (
        session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        target_id      TEXT NOT NULL,
        label          TEXT NOT NULL,
        label_entry_id TEXT NOT NULL,
        PRIMARY KEY (session_id, target_id)
      );

      -- First results of requests that carried a requestId, so a retry writes nothing.
      CREATE TABLE request_results (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        request_id TEXT NOT NULL,
        method     TEXT NOT NULL,
        result     TEXT NOT NULL,
        created_ms BIGINT NOT NULL,
        PRIMARY KEY (session_id, request_id)
      );

      -- One row per compaction/run: its state, timing and outcome (store/jobs.ts).
      CREATE TABLE compaction_jobs (
        seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id          TEXT NOT NULL UNIQUE,
        session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        request_id  TEXT,
        reason      TEXT NOT NULL,
        state       TEXT NOT NULL,
        -- the leaf the compaction was prepared for
        leaf_id     TEXT,
        -- the daemon running the job: a job of a live owner is not "interrupted"
        owner_pid   INTEGER NOT NULL,
        created_ms  BIGINT NOT NULL,
        updated_ms  BIGINT NOT NULL,
        ended_ms    BIGINT,
        summarizer  TEXT,
        error       TEXT,
        entry_id    TEXT,
        result      TEXT,
        -- the owner's start identity (on this engine: its lease, postgres/lease.ts)
        owner_start TEXT
      );
      CREATE INDEX compaction_jobs_by_session ON compaction_jobs (session_id, seq DESC);
      CREATE INDEX compaction_jobs_by_request ON compaction_jobs (request_id, seq DESC) WHERE request_id IS NOT NULL;
      CREATE INDEX compaction_jobs_running ON compaction_jobs (state) WHERE state IN ('prepared', 'summarizing');
    `,
  },
  {
    description: "full-text index of what entries say",
    script: `
      -- English stemming ("theme" finds "themes") and no stop words: every word people type can
      -- be searched, as with SQLite's porter tokenizer. Diacritics are removed before the text
      -- gets here (postgres/search.ts).
      CREATE TEXT SEARCH DICTIONARY base_context_stem (TEMPLATE = snowball, LANGUAGE = english);
      CREATE TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG} (COPY = pg_catalog.simple);
      ALTER TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG}
        ALTER MAPPING FOR asciiword, word, asciihword, hword, hword_asciipart, hword_part WITH base_context_stem;

      -- One row per searchable entry, keyed by entries.seq; the text shown with a hit is read
      -- from the entry itself. Removed with the entry (and so with its session). The session id
      -- is kept here too, so ranking sessions by their hits never reads the entries table.
      CREATE TABLE entries_fts (
        seq        BIGINT PRIMARY KEY REFERENCES entries (seq) ON DELETE CASCADE,
        session_id TEXT NOT NULL,
        vector     TSVECTOR NOT NULL
      );
      CREATE INDEX entries_fts_vector ON entries_fts USING GIN (vector);
      CREATE INDEX entries_fts_by_session ON entries_fts (session_id, seq);
    `,
  },
  {
    description: "daemon leases",
    script: `
      -- One row per daemon that used this database; it is alive while it holds the session-level
      -- advisory lock keyed by its id (postgres/lease.ts). Rows of dead daemons are pruned.
      CREATE TABLE daemons (
        id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        host       TEXT NOT NULL,
        pid        INTEGER NOT NULL,
        started_ms BIGINT NOT NULL
      );
    `,
  },
  {
    description: "the leaf check of a pipelined append",
    script: `
      -- An append sent in one round trip (postgres/engine.ts, leafExpectations) assumes the session's
      -- leaf is the one it last saw; this checks it on the server, under the session's write
      -- lock, and fails the transaction with ${STALE_LEAF_SQLSTATE} when it is not (the append is
      -- then made again the ordinary way). The leaf's seq tells its row apart from one of another
      -- incarnation of the session with the same ids.
      CREATE FUNCTION bc_expect_leaf(session TEXT, leaf TEXT, leaf_seq BIGINT) RETURNS BOOLEAN
      LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT EXISTS (
          SELECT 1 FROM sessions s JOIN entries e ON e.session_id = s.id AND e.id = s.leaf_id
          WHERE s.id = session AND s.leaf_id = leaf AND e.seq = leaf_seq AND s.import_started_ms IS NULL
        ) THEN
          RAISE EXCEPTION 'the leaf of session % is no longer %', session, leaf USING ERRCODE = '${STALE_LEAF_SQLSTATE}';
        END IF;
        RETURN TRUE;
      END
      $$;
    `,
  },
  {
    description: "imports sent without reading first",
    script: `
      -- A fresh import's batches go to the server without reading the session first
      -- (store/import-writer.ts): this checks, in each batch's transaction under the session's
      -- write lock, that the session is still being imported by that daemon (another one takes
      -- over the import of a daemon it finds dead), and fails the transaction when it is not.
      CREATE FUNCTION bc_expect_import(session TEXT, owner_pid INTEGER, owner_start TEXT) RETURNS BOOLEAN
      LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT EXISTS (
          SELECT 1 FROM sessions s
          WHERE s.id = session AND s.import_started_ms IS NOT NULL
            AND (owner_pid IS NULL OR (s.import_owner_pid = owner_pid AND s.import_owner_start = owner_start))
        ) THEN
          RAISE EXCEPTION 'session % is no longer being imported by this daemon', session USING ERRCODE = '${IMPORT_LOST_SQLSTATE}';
        END IF;
        RETURN TRUE;
      END
      $$;

      -- Entries' JSON is mostly over the size the server compresses: lz4 compresses it several
      -- times faster than the default (pglz), and as small. Servers built without lz4 keep pglz.
      DO $$
      BEGIN
        EXECUTE 'ALTER TABLE entries ALTER COLUMN json SET COMPRESSION lz4';
      EXCEPTION WHEN feature_not_supported OR syntax_error OR invalid_parameter_value THEN
        NULL;
      END
      $$;
    `,
  },
  {
    description: "entries written by one statement",
    script: `
      -- What a write transaction buffered of an append or an import batch (postgres/row-batches.ts),
      -- written by one statement instead of four: the server plans and runs one call, and the
      -- statements inside it run on cached plans. In order: the check that the session's leaf is
      -- still the one expected (an append sent without reading first; skipped when expect_session
      -- is NULL), the entries (their ids and seqs are returned), the search rows (of entries of
      -- this transaction) and the session row's tally (EntryWriter.applyTally's UPDATE; skipped
      -- when tally_session is NULL). A search row takes its entry's seq from what the insert
      -- returned; only one of an entry sent by an earlier call of the transaction is looked up in
      -- entries (looking every one up cost an append more server time than the rest of its search
      -- row: docs/storage.md). Each statement of a VOLATILE function takes a new snapshot:
      -- after the session's write lock, taken by the transaction before this call, every one
      -- sees what other daemons committed before it.
${writeEntriesFunction(false)}    `,
  },
  {
    description: "an append in one statement",
    script: `
      -- bc_write_entries takes the session's write lock itself when given lock_session (the lock
      -- a write transaction takes before its first statement: postgres/row-batches.ts), and
      -- stores a request's first result with the entries when given one (request_results'
      -- INSERT: store/request-results.ts), so a transaction that writes entries and nothing
      -- else is one statement, which the daemon sends without BEGIN and COMMIT
      -- (sync-postgres.ts, commitAsync): the server runs it as a transaction of its own, as it
      -- runs any statement sent outside a transaction block.
      -- Taken first in the call, the lock still comes before all the call reads: each statement
      -- of a VOLATILE function takes a new snapshot.
      DROP FUNCTION bc_write_entries(TEXT, TEXT, BIGINT, TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], INTEGER[], TEXT[],
        INTEGER[], TEXT[], TEXT[], TEXT[], INTEGER[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT, TEXT, INTEGER, BIGINT, TEXT, TEXT);
${writeEntriesFunction(true)}    `,
  },
];

/**
 * bc_write_entries as migration 6 made it and as migration 7 makes it again (`oneStatement`), with
 * the session's write lock taken first (`lock_session`) and a request's first result stored last
 * (`r_…`), so that an append, requestId or not, is one statement: one text for both.
 */
function writeEntriesFunction(oneStatement: boolean): string {
  const lockParameter = oneStatement ? "lock_session TEXT,\n        " : "";
  const lockStep = oneStatement
    ? `IF lock_session IS NOT NULL THEN\n          PERFORM pg_advisory_xact_lock(${SESSION_LOCK_SPACE}, hashtext(lock_session));\n        END IF;\n        `
    : "";
  const requestParameters = oneStatement ? ",\n        r_session TEXT, r_request_id TEXT, r_method TEXT, r_result TEXT, r_created_ms BIGINT" : "";
  const requestStep = oneStatement
    ? "IF r_request_id IS NOT NULL THEN\n" +
      "          INSERT INTO request_results (session_id, request_id, method, result, created_ms)\n" +
      "            VALUES (r_session, r_request_id, r_method, r_result, r_created_ms);\n" +
      "        END IF;\n        "
    : "";
  return `      CREATE FUNCTION bc_write_entries(
        ${lockParameter}expect_session TEXT, expect_leaf TEXT, expect_seq BIGINT,
        e_session_id TEXT[], e_id TEXT[], e_parent_id TEXT[], e_type TEXT[], e_role TEXT[], e_depth INTEGER[],
        e_compaction_id TEXT[], e_first_kept_depth INTEGER[], e_model_change_id TEXT[], e_model_entry_id TEXT[],
        e_thinking_change_id TEXT[], e_tokens INTEGER[], e_json TEXT[],
        t_session_id TEXT[], t_id TEXT[], t_text TEXT[],
        tally_session TEXT, tally_leaf TEXT, tally_added INTEGER, tally_modified_ms BIGINT, tally_name TEXT,
        tally_first_message TEXT${requestParameters}
      ) RETURNS TABLE (id TEXT, seq BIGINT)
      LANGUAGE plpgsql AS $$
      #variable_conflict use_column
      DECLARE
        new_session_ids TEXT[];
        new_ids TEXT[];
        new_seqs BIGINT[];
        indexed INTEGER;
      BEGIN
        ${lockStep}IF expect_session IS NOT NULL THEN
          PERFORM bc_expect_leaf(expect_session, expect_leaf, expect_seq);
        END IF;
        WITH inserted AS (
          INSERT INTO entries AS e (session_id, id, parent_id, type, role, depth, compaction_id, first_kept_depth,
                                    model_change_id, model_entry_id, thinking_change_id, tokens, json)
          SELECT * FROM unnest(e_session_id, e_id, e_parent_id, e_type, e_role, e_depth, e_compaction_id,
                               e_first_kept_depth, e_model_change_id, e_model_entry_id, e_thinking_change_id,
                               e_tokens, e_json)
          RETURNING e.session_id, e.id, e.seq
        )
        SELECT array_agg(i.session_id ORDER BY i.seq), array_agg(i.id ORDER BY i.seq), array_agg(i.seq ORDER BY i.seq)
          INTO new_session_ids, new_ids, new_seqs
          FROM inserted i;
        INSERT INTO entries_fts (seq, session_id, vector)
          SELECT n.seq, n.session_id, to_tsvector('${SEARCH_CONFIG}', t.text)
          FROM unnest(t_session_id, t_id, t_text) AS t(session_id, id, text)
          JOIN unnest(new_session_ids, new_ids, new_seqs) AS n(session_id, id, seq)
            ON n.session_id = t.session_id AND n.id = t.id;
        GET DIAGNOSTICS indexed = ROW_COUNT;
        IF indexed < coalesce(cardinality(t_id), 0) THEN
          INSERT INTO entries_fts (seq, session_id, vector)
            SELECT e.seq, e.session_id, to_tsvector('${SEARCH_CONFIG}', t.text)
            FROM unnest(t_session_id, t_id, t_text) AS t(session_id, id, text)
            JOIN entries e ON e.session_id = t.session_id AND e.id = t.id
            WHERE NOT EXISTS (
              SELECT 1 FROM unnest(new_session_ids, new_ids) AS n(session_id, id)
              WHERE n.session_id = t.session_id AND n.id = t.id
            );
        END IF;
        IF tally_session IS NOT NULL THEN
          UPDATE sessions SET
            leaf_id = tally_leaf,
            entry_count = entry_count + tally_added,
            modified_ms = GREATEST(modified_ms, tally_modified_ms),
            name = coalesce(tally_name, name),
            first_message = coalesce(first_message, tally_first_message)
          WHERE sessions.id = tally_session;
        END IF;
        ${requestStep}RETURN QUERY SELECT * FROM unnest(new_ids, new_seqs);
      END
      $$;
`;
}

export const POSTGRES_SCHEMA_VERSION = postgresMigrations.length;

/** The PostgreSQL database was migrated by a newer base-context (same kind as SQLite's error). */
export class PostgresTooNewError extends DatabaseTooNewError {
  constructor(schemaVersion: number) {
    super(schemaVersion, POSTGRES_SCHEMA_VERSION, "the PostgreSQL database");
  }
}

const VERSION_TABLE_EXISTS = "SELECT to_regclass('schema_version') IS NOT NULL AS present";
const READ_VERSION = "SELECT coalesce(max(version), 0) AS version FROM schema_version";

/** Steps applied so far (0 for an empty database). */
export function postgresSchemaVersion(db: MigrationConnection): number {
  const present = db.query<{ present: boolean }>(VERSION_TABLE_EXISTS).rows[0]?.present === true;
  if (!present) return 0;
  return Number(db.query<{ version: number }>(READ_VERSION).rows[0]?.version ?? 0);
}

/**
 * Brings the database to POSTGRES_SCHEMA_VERSION. Daemons on several hosts may meet a fresh
 * database at once: the version is read again under a transaction-level advisory lock and only
 * the missing steps run, all in one transaction (DDL is transactional here), so a failed step
 * leaves the database as it was.
 */
export function migratePostgres(db: MigrationConnection): void {
  const found = postgresSchemaVersion(db);
  if (found > POSTGRES_SCHEMA_VERSION) throw new PostgresTooNewError(found);
  if (found === POSTGRES_SCHEMA_VERSION) return;
  db.begin("write");
  try {
    db.query("SELECT pg_advisory_xact_lock($1, $2)", [MIGRATION_LOCK_SPACE, MIGRATION_LOCK_KEY]);
    db.query("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    const current = Number(db.query<{ version: number }>(READ_VERSION).rows[0]?.version ?? 0);
    if (current > POSTGRES_SCHEMA_VERSION) throw new PostgresTooNewError(current);
    for (let step = current; step < POSTGRES_SCHEMA_VERSION; step++) {
      const migration = postgresMigrations[step]!;
      try {
        db.exec(migration.script);
      } catch (error) {
        throw new Error(`schema migration ${step + 1} (${migration.description}) failed: ${(error as Error).message}`, { cause: error });
      }
    }
    if (current < POSTGRES_SCHEMA_VERSION) {
      db.query("DELETE FROM schema_version");
      db.query("INSERT INTO schema_version (version) VALUES ($1)", [POSTGRES_SCHEMA_VERSION]);
    }
    db.commit();
  } catch (error) {
    db.rollback();
    throw error;
  }
}
