/**
 * The Sessions view: the sessions of this workspace first (those whose folder is one of the
 * workspace's folders or inside one), then the others; or, while a search is on, the sessions
 * that matched, best first, each with the entries that matched.
 */
import type { SearchHit, SessionSummary } from "@base-context/protocol";
import type { z } from "zod";
import { baseName, escapeMarkdown, oneLine, plural, relativeTime } from "./format.js";
import type { ViewItem } from "./view-item.js";

export type Summary = z.infer<typeof SessionSummary>;
export type Hit = z.infer<typeof SearchHit>;

export interface SearchResults {
  query: string;
  results: { session: Summary; hitCount: number; nameMatches: boolean; hits: Hit[] }[];
}

export interface SessionsViewInput {
  sessions: readonly Summary[];
  workspaceFolders: readonly string[];
  /** For "3 h ago". */
  now: number;
  /** More sessions than listed: a row offers the next page. */
  hasMore?: boolean;
  search?: SearchResults;
  /** The session the other views show. */
  openSessionId?: string;
}

export const OPEN_SESSION_COMMAND = "baseContext.openSession";
export const LOAD_MORE_COMMAND = "baseContext.loadMoreSessions";

export function sessionsView(input: SessionsViewInput): ViewItem[] {
  if (input.search) return searchView(input.search, input);
  const ours = input.sessions.filter((session) => inWorkspace(session.cwd, input.workspaceFolders));
  const others = input.sessions.filter((session) => !inWorkspace(session.cwd, input.workspaceFolders));
  const more: ViewItem[] = input.hasMore
    ? [{ id: "more", label: "Load more sessions…", collapsible: "none", icon: { id: "ellipsis" }, command: { command: LOAD_MORE_COMMAND, title: "Load more" } }]
    : [];
  if (input.sessions.length === 0) return [];
  if (input.workspaceFolders.length === 0) return [...input.sessions.map((s) => sessionItem(s, input, true)), ...more];
  const groups: ViewItem[] = [
    {
      id: "group:workspace",
      label: "This workspace",
      description: ours.length === 0 ? "no sessions" : plural(ours.length, "session"),
      collapsible: "expanded",
      icon: { id: "root-folder" },
      contextValue: "group",
      children: ours.map((session) => sessionItem(session, input, false)),
    },
  ];
  if (others.length > 0 || input.hasMore) {
    groups.push({
      id: "group:elsewhere",
      label: "Other folders",
      description: plural(others.length, "session") + (input.hasMore ? "+" : ""),
      collapsible: ours.length === 0 ? "expanded" : "collapsed",
      icon: { id: "folder-library" },
      contextValue: "group",
      children: [...others.map((session) => sessionItem(session, input, true)), ...more],
    });
  }
  return groups;
}

/**
 * The list after `session/didChange` news: a changed session replaces its row (or joins the list,
 * created by another client), a deleted one leaves, newest change first.
 */
export function applySessionNews(sessions: readonly Summary[], changed: readonly Summary[], deleted: readonly string[]): Summary[] {
  const gone = new Set([...deleted, ...changed.map((session) => session.id)]);
  return [...changed, ...sessions.filter((session) => !gone.has(session.id))].sort(
    (a, b) => Date.parse(b.modifiedAt) - Date.parse(a.modifiedAt) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
}

/** Whether a session's folder is one of the workspace's or inside one (same separators assumed). */
export function inWorkspace(cwd: string, folders: readonly string[]): boolean {
  const trimmed = cwd.replace(/[\\/]+$/, "");
  return folders.some((folder) => {
    const root = folder.replace(/[\\/]+$/, "");
    return trimmed === root || trimmed.startsWith(`${root}/`) || trimmed.startsWith(`${root}\\`);
  });
}

/** What a session is called in lists and messages: its name, else its first message, else its id. */
export function sessionTitle(session: Pick<Summary, "id" | "name" | "firstMessage">, max = 80): string {
  if (session.name !== undefined && session.name.trim().length > 0) return oneLine(session.name, max);
  if (session.firstMessage !== undefined && session.firstMessage.trim().length > 0) return oneLine(session.firstMessage, max);
  return `session ${session.id.slice(0, 8)}`;
}

/** Which agent wrote a session, when the daemon says so (session/list's `format`; absent for a session made through the API). */
export function agentOf(session: Summary): string | undefined {
  if (session.format === "claude-code-jsonl") return "Claude Code";
  if (session.format === "codex-jsonl") return "Codex";
  if (session.format === "pi-jsonl") return "pi";
  return undefined;
}

function sessionItem(session: Summary, input: SessionsViewInput, showFolder: boolean): ViewItem {
  const agent = agentOf(session);
  const parts = [
    ...(agent ? [agent] : []),
    ...(showFolder ? [baseName(session.cwd) || session.cwd] : []),
    plural(session.entryCount, "entry", "entries"),
    relativeTime(session.modifiedAt, input.now),
  ];
  const open = session.id === input.openSessionId;
  return {
    id: `session:${session.id}`,
    label: sessionTitle(session),
    description: parts.join(" · "),
    tooltip: sessionTooltip(session, agent),
    icon: { id: open ? "comment-discussion" : "comment", ...(open ? { color: "charts.blue" } : {}) },
    contextValue: "session",
    collapsible: "none",
    command: { command: OPEN_SESSION_COMMAND, title: "Open Session", arguments: [session.id] },
    accessibilityLabel: `session ${sessionTitle(session)}, ${parts.join(", ")}`,
  };
}

function sessionTooltip(session: Summary, agent: string | undefined): string {
  const lines = [
    `**${escapeMarkdown(sessionTitle(session, 200))}**`,
    "",
    `- id: \`${session.id}\``,
    `- folder: ${escapeMarkdown(session.cwd || "(none)")}`,
    ...(agent ? [`- written by: ${agent}`] : []),
    `- ${plural(session.entryCount, "entry", "entries")}`,
    `- created ${session.createdAt}, last change ${session.modifiedAt}`,
  ];
  if (session.firstMessage && session.name) lines.push("", `First message: ${escapeMarkdown(oneLine(session.firstMessage, 300))}`);
  return lines.join("\n");
}

function searchView(search: SearchResults, input: SessionsViewInput): ViewItem[] {
  const header: ViewItem = {
    id: "search",
    label: `“${search.query}”`,
    description: search.results.length === 0 ? "nothing found" : `${plural(search.results.length, "session")}, best match first`,
    icon: { id: "search" },
    collapsible: "none",
    contextValue: "search",
  };
  return [
    header,
    ...search.results.map((result) => {
      const item = sessionItem(result.session, input, !inWorkspace(result.session.cwd, input.workspaceFolders));
      const hits = result.hits.map((hit) => hitItem(result.session.id, hit));
      const unlisted = result.hitCount - hits.length;
      if (unlisted > 0) hits.push({ id: `hit:${result.session.id}:more`, label: `… ${plural(unlisted, "more matching entry", "more matching entries")}`, collapsible: "none" });
      return {
        ...item,
        id: `search:${result.session.id}`,
        description: `${plural(result.hitCount, "match", "matches")}${result.nameMatches ? " (name)" : ""} · ${item.description}`,
        collapsible: hits.length > 0 ? ("expanded" as const) : ("none" as const),
        children: hits,
      };
    }),
  ];
}

function hitItem(sessionId: string, hit: Hit): ViewItem {
  const who = hit.role ?? hit.type;
  return {
    id: `hit:${sessionId}:${hit.entryId}`,
    label: oneLine(hit.snippet, 160),
    description: `${who} · ${hit.entryId.slice(0, 8)}`,
    icon: { id: "quote" },
    collapsible: "none",
    command: { command: OPEN_SESSION_COMMAND, title: "Open Session", arguments: [sessionId, hit.entryId] },
  };
}
