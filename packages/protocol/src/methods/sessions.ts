import { z } from "zod";
import { notification, request } from "../declare.js";
import { EntryInput, SessionEntry, SessionHeader } from "../entries.js";
import { IdString, MAX_LABEL_CHARS, MAX_NAME_CHARS, PathString } from "../limits.js";

// Object and union schemas are `z.lazy`: built on first use, not when this module loads (see
// ../entries.ts, docs/architecture.md#start-path-and-bundles).

const SessionId = IdString();
const EntryId = IdString();
/** Client-chosen id making a request idempotent: a retry returns the first result. */
export const RequestId = z.string().min(1).max(200);

export const SessionCreate = request(
  "session/create",
  () => z.object({
    cwd: PathString(),
    name: z.string().max(MAX_NAME_CHARS).optional(),
    parentSession: PathString().optional(),
    id: SessionId.optional(),
  }),
  () => z.object({ session: SessionHeader }),
);

export const SessionSummary = z.lazy(() =>
  z.object({
    id: z.string(),
    cwd: z.string(),
    name: z.string().optional(),
    createdAt: z.string(),
    modifiedAt: z.string(),
    entryCount: z.number().int(),
    firstMessage: z.string().optional(),
    format: ImportFormat.optional().describe(
      "The format of the file the session was imported from, so the agent that wrote it (a session exported to pi's format " +
        "and imported back keeps its agent's). Absent for a session made through session/create or session/fork.",
    ),
  }),
);

export const SessionList = request(
  "session/list",
  () => z.object({
    cwd: PathString().optional(),
    /** Case-insensitive substring of the session name or first message. */
    query: z.string().max(1000).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    cursor: z.string().max(1000).optional(),
  }),
  () => z.object({ sessions: z.array(SessionSummary), nextCursor: z.string().optional() }),
);

/** One entry that matched a search: where it is and the words around the match. */
export const SearchHit = z.lazy(() =>
  z.object({
    entryId: z.string(),
    /** The entry's type, and for a message its role. */
    type: z.string(),
    role: z.string().optional(),
    /** The matched text with some context, on one line. */
    snippet: z.string(),
  }),
);

export const SessionSearch = request(
  "session/search",
  () => z.object({
    /**
     * Words to find in what the sessions say (user and assistant text, shell commands, custom
     * messages, summaries, names). Every word must appear; each also matches as the start of a
     * word and by its stem ("theme" finds "themes"). Tool results and thinking are not searched.
     */
    query: z.string().min(1).max(1000),
    cwd: PathString().optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    /** Hits listed per session (default 3). */
    hits: z.number().int().min(0).max(100).optional(),
  }),
  () => z.object({
    /**
     * Best first: sessions whose name contains the query (newest first), then by the rank of
     * their best matching entry (SQLite FTS5 bm25).
     */
    results: z.array(
      z.object({
        session: SessionSummary,
        /** Entries that matched, in all. */
        hitCount: z.number().int(),
        nameMatches: z.boolean(),
        hits: z.array(SearchHit),
      }),
    ),
  }),
);

/**
 * Names a session: appends a `session_info` entry (pi's way of naming a session, so the name
 * survives export), which becomes the name in session/list and session/get.
 */
export const SessionRename = request(
  "session/rename",
  () => z.object({ sessionId: SessionId, name: z.string().trim().min(1).max(500) }),
  () => z.object({ entry: SessionEntry, session: SessionSummary }),
);

export const SessionGet = request(
  "session/get",
  () => z.object({ sessionId: SessionId }),
  () => z.object({
    session: SessionHeader,
    leafId: z.string().nullable(),
    entryCount: z.number().int(),
    format: ImportFormat.optional().describe("The format of the file the session was imported from (as SessionSummary's format)."),
  }),
);

export const SessionDelete = request("session/delete", () => z.object({ sessionId: SessionId }), () => z.object({}));

export const SessionFork = request(
  "session/fork",
  () => z.object({ sessionId: SessionId, entryId: EntryId }),
  () => z.object({ session: SessionHeader }),
);

/**
 * Session file formats `session/import` reads: pi's JSONL, Claude Code's transcripts
 * (`~/.claude/projects/<project>/<session>.jsonl`) and Codex's rollouts
 * (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`). Export always writes pi's.
 */
export const IMPORT_FORMATS = ["pi-jsonl", "claude-code-jsonl", "codex-jsonl"] as const;
export const ImportFormat = z.lazy(() => z.enum(IMPORT_FORMATS));
export type ImportFormat = z.infer<typeof ImportFormat>;

export const SessionImport = request(
  "session/import",
  () => z
    .object({
      /** Omitted: detected from the file's first lines (a file that is none of them is refused). */
      format: ImportFormat.optional(),
      path: PathString().optional(),
      content: z.string().optional(),
      cwd: PathString().optional(),
      /**
       * Give the session a fresh id instead of the header's: imports a copy of a file whose
       * session is already here (an export imported again). Without it such an import fails with
       * `session_exists`.
       */
      newId: z.boolean().optional(),
    })
    .refine((p) => (p.path === undefined) !== (p.content === undefined), {
      message: "give exactly one of `path` or `content`",
    }),
  () => z.object({
    session: SessionHeader,
    entryCount: z.number().int(),
    /**
     * Lines that could not be read (1-based line numbers and why); pi skips them too. The history
     * is never cut at one: an entry whose parent was an unreadable line hangs under the last entry
     * read before it (`bridgedTo`, which the reason names too).
     */
    skippedLines: z.array(z.object({ line: z.number().int(), reason: z.string(), bridgedTo: z.string().optional() })).optional(),
    /** The format read (the one given, or the one detected). */
    format: ImportFormat.optional(),
    /**
     * Entries this import added. Equal to `entryCount` for a new session; on a re-import (the
     * session existed, its entries are recognised by their ids in the file) only the new ones.
     */
    addedEntries: z.number().int().optional(),
    /** True when the session existed and this import appended what was new in the file. */
    updated: z.boolean().optional(),
    /**
     * Lines the format holds that are not conversation (Claude Code's `progress`,
     * `file-history-snapshot`, `queue-operation`…), skipped on purpose: how many of each type.
     */
    ignoredLines: z.record(z.string(), z.number().int()).optional(),
    /**
     * True when the file's part imported before is no longer what was read then (the file was
     * rewritten, not appended to): nothing was added, the session keeps what it holds, and
     * `warning` says so. Import it with `newId` to keep that version too.
     */
    rewritten: z.boolean().optional(),
    warning: z.string().optional(),
  }),
);

export const SessionExport = request(
  "session/export",
  () => z.object({ sessionId: SessionId, format: z.literal("pi-jsonl"), path: PathString().optional() }),
  () => z.object({
    content: z.string().optional(),
    path: z.string().optional(),
    /**
     * Set when the file cannot record the session's current position. A pi file has no leaf
     * pointer (its last line is the leaf), so the entries are written with the current leaf
     * last; a leaf with entries under it, or no leaf at all, cannot be last.
     */
    warning: z.string().optional(),
  }),
);

export const EntryAppend = request(
  "entry/append",
  () => z.object({ sessionId: SessionId, entry: EntryInput, parentId: EntryId.nullable().optional(), requestId: RequestId.optional() }),
  () => z.object({ entry: SessionEntry, leafId: z.string(), tokens: z.number().int() }),
);

export const EntryAppendMany = request(
  "entry/appendMany",
  () => z.object({ sessionId: SessionId, entries: z.array(EntryInput).min(1), requestId: RequestId.optional() }),
  () => z.object({ entries: z.array(SessionEntry), leafId: z.string() }),
);

export const EntryGet = request(
  "entry/get",
  () => z.object({ sessionId: SessionId, entryId: EntryId }),
  () => z.object({ entry: SessionEntry, tokens: z.number().int().optional() }),
);

export const SessionBranch = request(
  "session/branch",
  () => z.object({ sessionId: SessionId, entryId: EntryId.nullable() }),
  () => z.object({ leafId: z.string().nullable() }),
);

export const SessionPath = request(
  "session/path",
  () => z.object({ sessionId: SessionId, leafId: EntryId.nullable().optional() }),
  () => z.object({ entries: z.array(SessionEntry) }),
);

export interface TreeNode {
  entry: z.infer<typeof SessionEntry>;
  label?: string;
  /** True on the node that is the session's current leaf. */
  isLeaf?: boolean;
  children: TreeNode[];
}
export const TreeNode: z.ZodType<TreeNode> = z.lazy(() =>
  z.object({
    entry: SessionEntry,
    label: z.string().optional(),
    isLeaf: z.boolean().optional(),
    children: z.array(TreeNode),
  }),
);

/** A tree node without nesting: the tree follows from `entry.parentId`. */
export const FlatTreeNode = z.lazy(() =>
  z.object({ entry: SessionEntry, label: z.string().optional(), isLeaf: z.boolean().optional() }),
);

export const SessionTree = request(
  "session/tree",
  () => z.object({
    sessionId: SessionId,
    /**
     * Return `nodes` (every entry in insertion order: parents before children, siblings in time
     * order) and empty `roots`. A session deeper than ~1000 entries cannot be sent nested: JSON
     * serializers overflow their stack on the nesting.
     */
    flat: z.boolean().optional(),
  }),
  () => z.object({ roots: z.array(TreeNode), leafId: z.string().nullable(), nodes: z.array(FlatTreeNode).optional() }),
);

export const LabelSet = request(
  "label/set",
  () => z.object({ sessionId: SessionId, targetId: EntryId, label: z.string().min(1).max(MAX_LABEL_CHARS).nullable() }),
  () => z.object({ entry: SessionEntry }),
);

/**
 * Entries were appended to a session by another client of the same daemon (`serve --socket`):
 * sent to every other connection that has the session open (named it in a request), so an
 * editor window sees what an agent in another window wrote. The client that appended gets the
 * reply instead. `leafId` is the session's leaf after the append.
 */
export const EntryDidAppend = notification(
  "entry/didAppend",
  () => z.object({ sessionId: z.string(), entryIds: z.array(z.string()).min(1), leafId: z.string() }),
);

/**
 * Starts (or, with `enabled: false`, stops) `session/didChange` notifications to this connection:
 * news of every session of the store, whoever wrote it — this daemon's other clients, or another
 * process on the same database (an agent's own daemon, a CLI command, Claude Code's hook). What a
 * session list or an editor's view needs to stay current without asking again.
 */
export const SessionWatch = request(
  "session/watch",
  () => z.object({ enabled: z.boolean().default(true) }),
  () => z.object({}),
);

/**
 * Sessions changed in the store since the last notification (sent after `session/watch`, checked
 * about once a second and only when the database changed): created, appended to, renamed or
 * with their leaf moved (`changed`, as `session/list` lists them, newest first), or deleted.
 */
export const SessionDidChange = notification(
  "session/didChange",
  () => z.object({
    changed: z.array(SessionSummary).describe("Sessions created or written (appended to, renamed, leaf moved), newest first."),
    deleted: z.array(z.string()).describe("Ids of the sessions deleted."),
  }),
);
