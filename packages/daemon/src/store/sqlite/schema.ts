/**
 * Schema and migrations. `PRAGMA user_version` holds the number of migration steps applied; a
 * step is never edited once released — a change to the schema is a new step at the end.
 */
import type { Database } from "better-sqlite3";
import { DatabaseTooNewError } from "../database-too-new.js";

export interface Migration {
  /** What the step does, for error messages. */
  readonly description: string;
  up(db: Database): void;
}

export const migrations: readonly Migration[] = [
  {
    description: "sessions, entries with path columns, labels, request results",
    up(db) {
      db.exec(`
        CREATE TABLE sessions (
          id                TEXT PRIMARY KEY,
          cwd               TEXT NOT NULL,
          created_at        TEXT NOT NULL,
          -- ms since epoch: ISO strings of imported files do not always sort as text
          modified_ms       INTEGER NOT NULL,
          parent_session    TEXT,
          -- display name: the latest session_info name, else the header's name
          name              TEXT,
          -- header fields beyond id/cwd/createdAt/parentSession, in their original order
          header_extra      TEXT NOT NULL DEFAULT '{}',
          leaf_id           TEXT,
          entry_count       INTEGER NOT NULL DEFAULT 0,
          first_message     TEXT,
          -- set while an import is running: the session is invisible until it completes
          import_started_ms INTEGER
        );
        CREATE INDEX sessions_by_modified ON sessions (modified_ms DESC, id DESC);
        CREATE INDEX sessions_by_cwd ON sessions (cwd, modified_ms DESC, id DESC);

        -- seq (the rowid) is the insertion order. The path columns are computed from the parent
        -- at insert time so a context path never has to walk further up than it needs.
        CREATE TABLE entries (
          seq                INTEGER PRIMARY KEY,
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

        -- The current label of each labelled entry (the latest label entry wins, as in pi).
        CREATE TABLE labels (
          session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
          target_id      TEXT NOT NULL,
          label          TEXT NOT NULL,
          label_entry_id TEXT NOT NULL,
          PRIMARY KEY (session_id, target_id)
        ) WITHOUT ROWID;

        -- First results of requests that carried a requestId, so a retry writes nothing.
        CREATE TABLE request_results (
          session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
          request_id TEXT NOT NULL,
          method     TEXT NOT NULL,
          result     TEXT NOT NULL,
          created_ms INTEGER NOT NULL,
          PRIMARY KEY (session_id, request_id)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    description: "compaction jobs",
    up(db) {
      db.exec(`
        -- One row per compaction/run: its state, timing and outcome (store/jobs.ts).
        CREATE TABLE compaction_jobs (
          seq         INTEGER PRIMARY KEY,
          id          TEXT NOT NULL UNIQUE,
          session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
          request_id  TEXT,
          reason      TEXT NOT NULL,
          state       TEXT NOT NULL,
          -- the leaf the compaction was prepared for
          leaf_id     TEXT,
          -- the process running the job: a job of a live process is not "interrupted"
          owner_pid   INTEGER NOT NULL,
          created_ms  INTEGER NOT NULL,
          updated_ms  INTEGER NOT NULL,
          ended_ms    INTEGER,
          summarizer  TEXT,
          error       TEXT,
          entry_id    TEXT,
          result      TEXT
        );
        CREATE INDEX compaction_jobs_by_session ON compaction_jobs (session_id, seq DESC);
        CREATE INDEX compaction_jobs_by_request ON compaction_jobs (request_id, seq DESC) WHERE request_id IS NOT NULL;
        CREATE INDEX compaction_jobs_running ON compaction_jobs (state) WHERE state IN ('prepared', 'summarizing');
      `);
    },
  },
  {
    description: "index of entries whose token count is missing",
    up(db) {
      db.exec(`
        -- Imports store entries without counts; a background backfill fills them in, newest
        -- first, and resumes after a restart. Only rows with tokens NULL are in this index, so it
        -- stays small and costs nothing once the counts are in.
        CREATE INDEX entries_uncounted ON entries (session_id, seq) WHERE tokens IS NULL;
      `);
    },
  },
  {
    description: "owner identity of imports and compaction jobs",
    up(db) {
      addOwnerColumns(db);
    },
  },
  {
    description: "full-text index of what entries say",
    up(db) {
      // A development build numbered this step 4 (before the owner columns): a database it wrote
      // has the index and trigger already and may lack the owner columns. Every statement here
      // tolerates what exists, and the columns are made sure of as well.
      addOwnerColumns(db);
      db.exec(`
        -- Contentless: only the index is stored (the text is in entries.json), keyed by entries.seq.
        -- Porter stemming and prefix queries let "theme" find "themes" (store/search.ts).
        CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
          text, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER IF NOT EXISTS entries_fts_delete AFTER DELETE ON entries BEGIN
          DELETE FROM entries_fts WHERE rowid = old.seq;
        END;
        -- An index found here is rebuilt from the entries, so no row is indexed twice.
        INSERT INTO entries_fts (entries_fts) VALUES ('delete-all');
      `);
      // Existing entries, page by page (one statement at a time on the connection).
      const page = db.prepare(
        "SELECT seq, json FROM entries WHERE seq > ? AND type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info') ORDER BY seq LIMIT 1000",
      );
      const insert = db.prepare("INSERT INTO entries_fts (rowid, text) VALUES (?, ?)");
      for (let after = 0; ; ) {
        const rows = page.all(after) as { seq: number; json: string }[];
        if (rows.length === 0) break;
        for (const row of rows) {
          const text = migrationSearchText(JSON.parse(row.json) as Record<string, unknown>);
          if (text !== undefined) insert.run(row.seq, text);
        }
        after = rows[rows.length - 1]!.seq;
      }
    },
  },
];

export const SCHEMA_VERSION = migrations.length;


export function schemaVersion(db: Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/**
 * Brings the database to SCHEMA_VERSION. Several daemons may open a fresh file at once, so the
 * version is read again under the write lock and only the missing steps run.
 */
export function migrate(db: Database): void {
  const found = schemaVersion(db);
  if (found > SCHEMA_VERSION) throw new DatabaseTooNewError(found, SCHEMA_VERSION);
  if (found === SCHEMA_VERSION) return;
  db.transaction(() => {
    const current = schemaVersion(db);
    for (let step = current; step < SCHEMA_VERSION; step++) {
      const migration = migrations[step]!;
      try {
        migration.up(db);
      } catch (error) {
        throw new Error(`schema migration ${step + 1} (${migration.description}) failed: ${(error as Error).message}`);
      }
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/** Step 4's columns, each added only when missing (step 5 makes sure of them too, see there). */
function addOwnerColumns(db: Database): void {
  const add = (table: string, column: string, type: string) => {
    const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
    if (!columns.some((existing) => existing.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  };
  // The process running an import (pid and start identity, store/owner.ts): an import whose
  // owner is gone is removed at once instead of blocking its session id for an hour.
  add("sessions", "import_owner_pid", "INTEGER");
  add("sessions", "import_owner_start", "TEXT");
  // A job's owner start identity, so a reused pid is not taken for the job's daemon.
  add("compaction_jobs", "owner_start", "TEXT");
}

/**
 * The text step 5 indexes for an existing entry. A frozen copy of what store/search-text.ts did
 * when the step was written, not a call to it: a migration must do the same thing forever, while
 * the live function may change (a change to what is indexed is a new step that rebuilds the index).
 * Exported for its test only.
 */
export function migrationSearchText(entry: Record<string, unknown>): string | undefined {
  let text: string | undefined;
  switch (entry.type) {
    case "message": {
      const message = (entry.message ?? {}) as { role?: unknown; content?: unknown; command?: unknown };
      if (message.role === "user" || message.role === "assistant" || message.role === "custom") text = migrationBlocksText(message.content);
      else if (message.role === "bashExecution" && typeof message.command === "string") text = message.command;
      break;
    }
    case "custom_message":
      text = migrationBlocksText(entry.content);
      break;
    case "compaction":
    case "branch_summary":
      text = typeof entry.summary === "string" ? entry.summary : undefined;
      break;
    case "session_info":
      text = typeof entry.name === "string" ? entry.name : undefined;
      break;
  }
  const trimmed = text?.trim();
  if (trimmed === undefined || trimmed.length === 0) return undefined;
  return trimmed.length > 32_768 ? trimmed.slice(0, 32_768) : trimmed;
}

function migrationBlocksText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts: string[] = [];
  for (const block of content as { type?: unknown; text?: unknown }[]) {
    if (block?.type === "text" && typeof block.text === "string") parts.push(block.text);
  }
  return parts.join("\n");
}
