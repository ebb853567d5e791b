/**
 * SessionService: the sessions/ side of the protocol (SessionsApi) plus what other parts of the
 * daemon read (context paths with token counts) and write (appends with preconditions).
 *
 * Ordering: every method that writes calls the store synchronously before its first `await`, so
 * requests apply in arrival order; token counts are stored with the entries when they can be
 * computed on the spot, else filled in afterwards (see TokenLedger, TokenBackfill).
 */
import {
  EntryAppend,
  EntryAppendMany,
  type EntryInput,
  type SessionDidChange,
  type SessionEntry,
  type SessionHeader,
  type SessionSummary,
  type ValidParamsOf,
} from "@base-context/protocol";
import type { z } from "zod";
import { entryNotFound, LimitError, sessionNotFound } from "../errors.js";
import { defaultIds, type IdSource } from "../ids.js";
import { log } from "../log.js";
import { timeMs, type AppendedEntries, type AppendRequest, type SessionRecord, type SessionStore } from "../store/index.js";
import type { TokenCounter } from "../tokens/counter.js";
import type { SessionsApi } from "./api.js";
import type { SessionRecords } from "./session-records.js";
import { ContextPathCache, type ContextPathCacheLimits } from "./context-path-cache.js";
import { toContextPath, type ContextPath } from "./context-path.js";
import { jsonBytes } from "./entry-size.js";
import { exportToPath, exportToString } from "./export.js";
import { SessionImporter, type ImportOptions } from "./import.js";
import { decodeCursor, encodeCursor } from "./list-cursor.js";
import { TokenBackfill, type TokenBackfillOptions } from "./token-backfill.js";
import { TokenLedger, type CountedEntry } from "./token-ledger.js";
import { searchHit } from "./search-hit.js";
import { SessionWatch, type SessionWatchOptions } from "./session-watch.js";
import { flatTree, nestTree } from "./tree.js";

type Params<K extends keyof SessionsApi> = Parameters<SessionsApi[K]>[0];
type Result<K extends keyof SessionsApi> = Promise<Awaited<ReturnType<SessionsApi[K]>>>;
type Resolved<K extends keyof SessionsApi> = Awaited<Result<K>>;

export interface SessionServiceOptions {
  ids?: IdSource;
  /** The largest entry accepted on append, in bytes of its JSON (`limits.maxEntryBytes`); looked up at each append. */
  maxEntryBytes?: () => number;
  import?: ImportOptions;
  contextPathCache?: ContextPathCacheLimits;
  /** How often `watch` polls the store (tests shorten it). */
  watch?: SessionWatchOptions;
}

/** An append that wrote its entries or found them written by an earlier try of its requestId. */
export type CountedAppended = { status: "appended" | "replayed"; entries: CountedEntry[]; leafId: string; extra?: unknown };

/** An append's outcome with token counts (see SessionStore.append for the statuses). */
export type CountedAppendOutcome = CountedAppended | { status: "stale"; leafId: string | null };

/** An append without a path precondition (`onlyIfOnPath`): it cannot come back stale. */
export type UnconditionalAppendRequest = AppendRequest & { onlyIfOnPath?: undefined };

const DEFAULT_LIST_LIMIT = 50;
const DEFAULT_SEARCH_HITS = 3;

/** Entries were written to a session (not a replayed requestId): what `entry/didAppend` reports. */
export type AppendEvent = AppendedEntries;

/** What `session/didChange` reports. */
export type SessionNews = ValidParamsOf<typeof SessionDidChange>;

export class SessionService implements SessionsApi {
  private readonly ids: IdSource;
  private readonly tokens: TokenLedger;
  private readonly importer: SessionImporter;
  /** The latest context path of recently used sessions: the next one reads only new rows. */
  private readonly contextPaths: ContextPathCache;
  /** Fills counts that imports leave out; off until `startBackfill` (one-shot CLI commands leave them to readers). */
  private backfill: TokenBackfill | undefined;
  private readonly maxEntryBytes: (() => number) | undefined;
  /** The rows compaction and tree navigation read and write besides appends and context paths. */
  readonly records: SessionRecords;
  /** Made when a client first asks for `session/watch`. */
  private sessionWatch: SessionWatch | undefined;
  private readonly watchOptions: SessionWatchOptions | undefined;

  constructor(
    private readonly store: SessionStore,
    private readonly counter: TokenCounter,
    options: SessionServiceOptions = {},
  ) {
    this.ids = options.ids ?? defaultIds;
    this.maxEntryBytes = options.maxEntryBytes;
    this.records = store;
    this.tokens = new TokenLedger(store, counter);
    this.importer = new SessionImporter(store, this.ids, options.import);
    this.contextPaths = new ContextPathCache(options.contextPathCache);
    this.watchOptions = options.watch;
  }

  /**
   * Counts missing token counts in the background from now on: those of every session now, and
   * each import's after it. For long-running daemons; a CLI command that imports and exits leaves
   * them to the next reader (or daemon).
   */
  startBackfill(options: TokenBackfillOptions = {}): TokenBackfill {
    this.backfill ??= new TokenBackfill(this.store, this.counter, options);
    this.backfill.schedule();
    return this.backfill;
  }

  /** Stops the background backfill (before the counter and the store are disposed). */
  stopBackfill(): void {
    this.backfill?.stop();
  }

  // ---- sessions ------------------------------------------------------------------------------

  async create(params: Params<"create">): Result<"create"> {
    const createdAt = this.ids.now();
    const record = this.store.createSession({
      id: params.id ?? this.ids.sessionId(),
      cwd: params.cwd,
      createdAt,
      parentSession: params.parentSession,
      headerExtra: params.name !== undefined ? { name: params.name } : {},
      modifiedMs: timeMs(createdAt),
    });
    return { session: toHeader(record) };
  }

  async list(params: Params<"list">): Result<"list"> {
    const limit = params.limit ?? DEFAULT_LIST_LIMIT;
    const records = this.store.listSessions({
      cwd: params.cwd,
      query: params.query,
      limit: limit + 1,
      after: params.cursor !== undefined ? decodeCursor(params.cursor) : undefined,
    });
    const page = records.slice(0, limit);
    const result: Resolved<"list"> = { sessions: page.map(toSummary) };
    const last = page[page.length - 1];
    if (records.length > limit && last) result.nextCursor = encodeCursor({ modifiedMs: Date.parse(last.modifiedAt), id: last.id });
    return result;
  }

  async search(params: Params<"search">): Result<"search"> {
    const matches = this.store.searchSessions({
      text: params.query,
      cwd: params.cwd,
      limit: params.limit ?? DEFAULT_LIST_LIMIT,
      hitsPerSession: params.hits ?? DEFAULT_SEARCH_HITS,
    });
    const results: Resolved<"search">["results"] = [];
    for (const match of matches) {
      const record = this.store.getSession(match.sessionId);
      if (!record) continue;
      results.push({
        session: toSummary(record),
        hitCount: match.hitCount,
        nameMatches: match.nameMatches,
        hits: match.hits.map((hit) => searchHit(hit.entryId, JSON.parse(hit.json) as SessionEntry, params.query)),
      });
    }
    return { results };
  }

  /** A `session_info` entry under the current leaf, as pi names a session. */
  async rename(params: Params<"rename">): Result<"rename"> {
    this.store.requireSession(params.sessionId);
    const outcome = await this.appendEntries({ sessionId: params.sessionId, entries: [{ type: "session_info", name: params.name }] });
    return { entry: outcome.entries[0]!.entry, session: toSummary(this.store.requireSession(params.sessionId)) };
  }

  async get(params: Params<"get">): Result<"get"> {
    const record = this.store.requireSession(params.sessionId);
    return { session: toHeader(record), leafId: record.leafId, entryCount: record.entryCount };
  }

  async delete(params: Params<"delete">): Result<"delete"> {
    this.contextPaths.forget(params.sessionId);
    if (!this.store.deleteSession(params.sessionId)) throw sessionNotFound(params.sessionId);
    return {};
  }

  async fork(params: Params<"fork">): Result<"fork"> {
    const source = this.store.requireSession(params.sessionId);
    const createdAt = this.ids.now();
    const record = this.store.fork(params.sessionId, params.entryId, {
      id: this.ids.sessionId(),
      cwd: source.cwd,
      createdAt,
      parentSession: source.id,
      headerExtra: typeof source.headerExtra.name === "string" ? { name: source.headerExtra.name } : {},
      modifiedMs: timeMs(createdAt),
    });
    return { session: toHeader(record) };
  }

  /** `ctx.keepWhatIsRead`: stopped by its signal, the import keeps what it read (import.ts); for the Claude Code hook. */
  async import(params: Params<"import">, ctx?: { signal?: AbortSignal; keepWhatIsRead?: boolean }): Result<"import"> {
    const result = await this.importer.import(params, ctx?.signal, { keepWhatIsRead: ctx?.keepWhatIsRead === true });
    this.backfill?.schedule(result.session.id);
    return {
      session: toHeader(result.session),
      entryCount: result.entryCount,
      skippedLines: result.skippedLines,
      format: result.format,
      addedEntries: result.addedEntries,
      updated: result.updated,
      ...(Object.keys(result.ignoredLines).length > 0 ? { ignoredLines: result.ignoredLines } : {}),
      ...(result.rewritten === true ? { rewritten: true, warning: result.warning } : {}),
    };
  }

  async export(params: Params<"export">): Result<"export"> {
    if (params.path === undefined) return exportToString(this.store, params.sessionId);
    return { path: params.path, ...(await exportToPath(this.store, params.sessionId, params.path)) };
  }

  // ---- entries -------------------------------------------------------------------------------

  /**
   * With a `requestId` already used on this session, nothing is written and the first result is
   * returned — even when the retry's params differ (they are not compared).
   */
  async append(params: Params<"append">): Result<"append"> {
    const outcome = await this.appendEntries({
      sessionId: params.sessionId,
      entries: [params.entry],
      parentId: params.parentId,
      request: params.requestId !== undefined ? { id: params.requestId, method: EntryAppend.method } : undefined,
    });
    const [first] = outcome.entries;
    return { entry: first!.entry, leafId: outcome.leafId, tokens: first!.tokens };
  }

  /** All entries in one transaction, chained under the current leaf. Same requestId rule as `append`. */
  async appendMany(params: Params<"appendMany">): Result<"appendMany"> {
    const outcome = await this.appendEntries({
      sessionId: params.sessionId,
      entries: params.entries,
      request: params.requestId !== undefined ? { id: params.requestId, method: EntryAppendMany.method } : undefined,
    });
    return { entries: outcome.entries.map((counted) => counted.entry), leafId: outcome.leafId };
  }

  /**
   * The general append for other parts of the daemon (compaction commit, branch summaries):
   * `onlyIfOnPath` makes it conditional, `request.extra` stores extra data with a requestId's result.
   * Resolves once the appended entries' token counts are known (written with the store's next write). Only a
   * conditional append can be stale.
   */
  async appendEntries(request: UnconditionalAppendRequest): Promise<CountedAppended>;
  async appendEntries(request: AppendRequest): Promise<CountedAppendOutcome>;
  async appendEntries(request: AppendRequest): Promise<CountedAppendOutcome> {
    this.checkEntrySizes(request.entries);
    // Small entries are counted right here when the counter can (encoding loaded on this thread)
    // and stored with their counts in the same transaction; others are counted after the write.
    const tokens = request.tokens ?? this.countNow(request.entries);
    // The store write is started first: appends to a session apply in arrival order whatever the
    // counts cost (on SQLite it is written before this awaits anything; on PostgreSQL its commit
    // is awaited on the event loop, and later appends to the session queue behind it).
    const outcome = await this.store.appendAsync(tokens ? { ...request, tokens } : request);
    if (outcome.status === "stale") return outcome;
    // Their counts are written with the next write, not in a transaction of their own (token-ledger.ts).
    const entries = await this.tokens.withCounts(request.sessionId, outcome.entries, true);
    const counted: CountedAppendOutcome = { status: outcome.status, entries, leafId: outcome.leafId };
    if (outcome.status === "replayed" && outcome.extra !== undefined) counted.extra = outcome.extra;
    return counted;
  }

  /**
   * Every append path (entry/append, entry/appendMany, turn/end's reply, labels, summaries) comes
   * through here: an entry over the limit is refused before it is counted, copied or stored.
   */
  private checkEntrySizes(entries: readonly EntryInput[]): void {
    if (this.maxEntryBytes === undefined) return;
    const limit = this.maxEntryBytes();
    entries.forEach((entry, index) => {
      const bytes = jsonBytes(entry, limit);
      if (bytes <= limit) return;
      const which = entries.length === 1 ? "the entry" : `entry ${index}`;
      throw new LimitError(
        "entry_too_large",
        `${which} is larger than the largest accepted (${limit} bytes, setting limits.maxEntryBytes); nothing was written`,
        {
          maxEntryBytes: limit,
          index,
        },
      );
    });
  }

  /** Counts the counter can give on the spot; undefined to count after the write (also when counting fails). */
  private countNow(entries: readonly EntryInput[]): number[] | undefined {
    try {
      return this.counter.countEntriesNow?.(entries);
    } catch (error) {
      log("debug", `counting an append on the spot failed (${(error as Error).message}); counting it after the write`);
      return undefined;
    }
  }

  async getEntry(params: Params<"getEntry">): Result<"getEntry"> {
    this.store.requireSession(params.sessionId);
    const stored = this.store.getEntry(params.sessionId, params.entryId);
    if (!stored) throw entryNotFound(params.sessionId, params.entryId);
    const [counted] = await this.tokens.withCounts(params.sessionId, [stored]);
    return { entry: counted!.entry, tokens: counted!.tokens };
  }

  async branch(params: Params<"branch">): Result<"branch"> {
    this.store.setLeaf(params.sessionId, params.entryId);
    return { leafId: params.entryId };
  }

  async path(params: Params<"path">): Result<"path"> {
    return { entries: this.store.path(params.sessionId, params.leafId).map((stored) => stored.entry) };
  }

  /** Nested by default; `flat: true` for deep sessions (see MAX_NESTED_TREE_DEPTH). */
  async tree(params: Params<"tree">): Result<"tree"> {
    const { leafId } = this.store.requireSession(params.sessionId);
    const nodes = flatTree(this.store.entriesInOrder(params.sessionId), this.store.labels(params.sessionId), leafId);
    return params.flat ? { roots: [], nodes, leafId } : { roots: nestTree(nodes), leafId };
  }

  /** Appends a `label` entry under the current leaf (no label = cleared, as in pi). */
  async setLabel(params: Params<"setLabel">): Result<"setLabel"> {
    this.store.requireSession(params.sessionId);
    if (!this.store.hasEntry(params.sessionId, params.targetId)) throw entryNotFound(params.sessionId, params.targetId);
    const entry: EntryInput = { type: "label", targetId: params.targetId };
    if (params.label !== null) entry.label = params.label;
    const outcome = await this.appendEntries({ sessionId: params.sessionId, entries: [entry] });
    return { entry: outcome.entries[0]!.entry };
  }

  /**
   * `session/didChange` news (session-watch.ts): sessions created, written or deleted in the store
   * by anyone, polled while at least one listener is subscribed.
   */
  watch(listener: (news: SessionNews) => void): { dispose(): void } {
    this.sessionWatch ??= new SessionWatch(this.store, this.watchOptions);
    return this.sessionWatch.subscribe((changes) => {
      const changed: SessionRecord[] = [];
      const deleted = [...changes.deleted];
      for (const id of changes.changed) {
        const record = this.store.getSession(id);
        // Deleted between the poll and this read: the next poll would say so; say it now.
        if (record) changed.push(record);
        else deleted.push(id);
      }
      changed.sort((a, b) => Date.parse(b.modifiedAt) - Date.parse(a.modifiedAt));
      listener({ changed: changed.map(toSummary), deleted });
    });
  }

  /** Stops polling for every watcher (before the store closes). */
  stopWatching(): void {
    this.sessionWatch?.dispose();
  }

  /** See SessionStore.onDidAppend: every append that wrote entries, whichever part of the daemon made it. */
  onDidAppend(listener: (event: AppendEvent) => void): { dispose(): void } {
    return this.store.onDidAppend(listener);
  }

  // ---- reads for the context builder, compaction and tree navigation ---------------------------

  /**
   * The entries a context is built from: from the latest compaction's firstKeptEntryId (from the
   * root when there is no compaction on the path) to the leaf, in path order, with stored token
   * counts; plus the latest compaction / model_change / thinking_level_change on the path, which
   * may lie before that suffix. `leafId` undefined = the current leaf, null = empty path.
   */
  async getContextPath(sessionId: string, leafId?: string | null): Promise<ContextPath> {
    const rows = this.store.contextPath(sessionId, leafId, this.contextPaths.get(sessionId));
    this.contextPaths.remember(sessionId, rows);
    return toContextPath(rows, await this.tokens.withCounts(sessionId, rows.entries));
  }

  /**
   * The entries a context is built from (as `getContextPath`, the compaction in force first when it
   * lies before them), without token counts: for readers of what was said, which need no tokenizer.
   */
  contextEntries(sessionId: string, leafId?: string | null): SessionEntry[] {
    const rows = this.store.contextPath(sessionId, leafId, this.contextPaths.get(sessionId));
    const entries = rows.entries.map((stored) => stored.entry);
    const compaction = rows.compaction?.entry;
    if (compaction !== undefined && !entries.some((entry) => entry.id === compaction.id)) entries.unshift(compaction);
    return entries;
  }

  /** The whole path root → leaf with token counts (`leafId` undefined = current leaf, null = empty). */
  async getCountedPath(sessionId: string, leafId?: string | null): Promise<CountedEntry[]> {
    return this.tokens.withCounts(sessionId, this.store.path(sessionId, leafId));
  }
}

// ---- record → protocol shapes ------------------------------------------------------------------

function toHeader(record: SessionRecord): SessionHeader {
  const header: SessionHeader = { ...record.headerExtra, id: record.id, cwd: record.cwd, createdAt: record.createdAt };
  if (record.parentSession !== undefined) header.parentSession = record.parentSession;
  if (record.name !== undefined) header.name = record.name;
  else delete header.name;
  return header;
}

function toSummary(record: SessionRecord): z.infer<typeof SessionSummary> {
  const summary: z.infer<typeof SessionSummary> = {
    id: record.id,
    cwd: record.cwd,
    createdAt: record.createdAt,
    modifiedAt: record.modifiedAt,
    entryCount: record.entryCount,
  };
  if (record.name !== undefined) summary.name = record.name;
  if (record.firstMessage !== undefined) summary.firstMessage = record.firstMessage;
  return summary;
}
