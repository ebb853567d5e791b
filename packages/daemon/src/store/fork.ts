/**
 * Forking: a new session holding the path root → entry of another one, with the same ids and the
 * same JSON (copied in SQL, never loaded into memory), so ids and compactions keep meaning the
 * same thing. Labels the source has on those entries come along: label entries on the copied
 * path already say most of it; where the source's current label differs (set later or from
 * another branch) a fresh label entry is appended, as pi does when it branches a session.
 */
import type { SessionEntry } from "@base-context/protocol";
import { entryNotFound } from "../errors.js";
import type { IdSource } from "../ids.js";
import { emptyTally, type EntryWriter } from "./entry-writer.js";
import { firstMessageText, sessionInfoName, type PathColumns } from "./path-columns.js";
import { toSessionRecord, type SessionRecord, type SessionTally } from "./rows.js";
import type { NewSession, SessionsTable } from "./sessions-table.js";
import type { SearchIndex } from "./store-engine.js";
import type { SqlStatements } from "./statements.js";

const COPY_PATH = `
  WITH RECURSIVE up(seq, parent_id, depth) AS (
    SELECT seq, parent_id, depth FROM entries WHERE session_id = @sourceId AND id = @entryId
    UNION ALL
    SELECT e.seq, e.parent_id, e.depth FROM up
      JOIN entries e ON e.session_id = @sourceId AND e.id = up.parent_id AND e.depth = up.depth - 1
  )
  INSERT INTO entries (session_id, id, parent_id, type, role, depth, compaction_id, first_kept_depth,
                       model_change_id, model_entry_id, thinking_change_id, tokens, json)
  SELECT @forkId, e.id, e.parent_id, e.type, e.role, e.depth, e.compaction_id, e.first_kept_depth,
         e.model_change_id, e.model_entry_id, e.thinking_change_id, e.tokens, e.json
  FROM up JOIN entries e ON e.seq = up.seq
  ORDER BY up.depth`;
const LABEL_ENTRIES = "SELECT json FROM entries WHERE session_id = ? AND type = 'label' ORDER BY seq";
const LABELS_OF = `SELECT target_id AS "targetId", label FROM labels WHERE session_id = ?`;
const SOURCE_LABELS_ON_FORK = `
  SELECT l.target_id AS "targetId", l.label FROM labels l
  WHERE l.session_id = @sourceId
    AND EXISTS (SELECT 1 FROM entries e WHERE e.session_id = @forkId AND e.id = l.target_id)`;
// Read a page at a time: the first user message with text is nearly always in the first page.
const USER_MESSAGES = "SELECT seq, json FROM entries WHERE session_id = ? AND role = 'user' AND seq > ? ORDER BY seq LIMIT ?";
const SESSION_INFOS_NEWEST_FIRST = `
  SELECT seq, json FROM entries WHERE session_id = ? AND type = 'session_info' AND seq < ? ORDER BY seq DESC LIMIT ?`;
const PAGE = 64;

export class Forker {
  constructor(
    private readonly sql: SqlStatements,
    private readonly writer: EntryWriter,
    private readonly sessions: SessionsTable,
    private readonly ids: Pick<IdSource, "now">,
    /** Runs a write in one IMMEDIATE transaction (the store's). */
    private readonly write: <T>(work: () => T, lockKey?: string) => T,
    private readonly search: SearchIndex,
  ) {}

  /** `fork.parentSession` should be the source id; the caller picks the new id and header. */
  fork(sourceId: string, entryId: string, fork: NewSession): SessionRecord {
    return this.write(() => {
      this.sessions.require(sourceId);
      const target = this.writer.pathColumns(sourceId, entryId);
      if (!target) throw entryNotFound(sourceId, entryId);
      this.sessions.insert(fork, fork.modifiedMs);
      const copied = this.sql.get(COPY_PATH).run({ sourceId, entryId, forkId: fork.id }).changes;
      this.search.indexSession(this.sql, fork.id);

      const tally = emptyTally(entryId, fork.modifiedMs);
      tally.added = copied;
      tally.firstMessage = this.firstMessage(fork.id);
      tally.name = this.latestName(fork.id);
      this.replayLabels(fork.id);
      this.carryLabels(sourceId, fork.id, target, tally);
      this.writer.applyTally(fork.id, tally);
      return toSessionRecord(this.sessions.row(fork.id)!);
    }, fork.id);
  }

  /** Rebuilds the label index from the copied label entries (targets outside the fork are left out). */
  private replayLabels(forkId: string): void {
    for (const json of this.sql.get<string>(LABEL_ENTRIES).pluck().all(forkId)) {
      const entry = JSON.parse(json) as Extract<SessionEntry, { type: "label" }>;
      if (this.writer.exists(forkId, entry.targetId)) this.writer.applyLabel(forkId, entry.targetId, entry.label, entry.id);
    }
  }

  /** Appends label entries wherever the fork's labels differ from the source's current ones. */
  private carryLabels(sourceId: string, forkId: string, leaf: PathColumns, tally: SessionTally): void {
    const wanted = new Map(this.labelRows(SOURCE_LABELS_ON_FORK, { sourceId, forkId }));
    const have = new Map(this.labelRows(LABELS_OF, forkId));
    const targets = new Set([...wanted.keys(), ...have.keys()]);
    let parent = leaf;
    const timestamp = this.ids.now();
    for (const targetId of targets) {
      const label = wanted.get(targetId);
      if (label === have.get(targetId)) continue;
      const entry: SessionEntry = { type: "label", id: this.writer.freshId(forkId), parentId: parent.id, timestamp, targetId };
      if (label !== undefined) entry.label = label;
      parent = this.writer.insert(forkId, entry, parent, { tokens: 0, firstKeptDepth: null }, tally);
    }
  }

  private labelRows(sql: string, params: unknown): [string, string][] {
    return this.sql
      .get<{ targetId: string; label: string }>(sql)
      .all(params)
      .map((row) => [row.targetId, row.label]);
  }

  private firstMessage(forkId: string): string | null {
    return this.firstIn(USER_MESSAGES, forkId, 0, firstMessageText);
  }

  private latestName(forkId: string): string | null {
    return this.firstIn(SESSION_INFOS_NEWEST_FIRST, forkId, Number.MAX_SAFE_INTEGER, sessionInfoName);
  }

  /** The first defined `pick` over the rows of `sql` (keyset-paged by seq from `fromSeq`). */
  private firstIn(sql: string, forkId: string, fromSeq: number, pick: (entry: SessionEntry) => string | undefined): string | null {
    for (let after = fromSeq; ; ) {
      const rows = this.sql.get<{ seq: number; json: string }>(sql).all(forkId, after, PAGE);
      for (const row of rows) {
        const found = pick(JSON.parse(row.json) as SessionEntry);
        if (found !== undefined) return found;
      }
      if (rows.length < PAGE) return null;
      after = rows[rows.length - 1]!.seq;
    }
  }
}
