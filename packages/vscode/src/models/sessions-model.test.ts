import { describe, expect, it } from "vitest";
import { agentOf, applySessionNews, inWorkspace, sessionsView, sessionTitle, type Summary } from "./sessions-model.js";

const NOW = Date.parse("2026-03-10T12:00:00.000Z");
const session = (id: string, cwd: string, modifiedAt: string, extra: Partial<Summary> = {}): Summary => ({
  id,
  cwd,
  createdAt: "2026-03-01T09:00:00.000Z",
  modifiedAt,
  entryCount: 12,
  ...extra,
});

const sessions = [
  session("a1b2c3d4-1", "/home/me/api", "2026-03-10T11:57:00.000Z", { name: "Refresh tokens", firstMessage: "Move the API to JWTs" }),
  session("e5f6a7b8-2", "/home/me/site", "2026-03-10T09:00:00.000Z", { firstMessage: "Fix the   footer\nlinks", entryCount: 1 }),
  session("c9d0e1f2-3", "/home/me/api/packages/db", "2026-03-04T12:00:00.000Z", { format: "claude-code-jsonl" }),
];

describe("agentOf", () => {
  it("names the agent the daemon says wrote the session (session/list's format), and none for a session made through the API", () => {
    const of = (format?: Summary["format"]) => agentOf(session("x", "/p", "2026-03-10T11:00:00.000Z", format ? { format } : {}));
    expect([of("pi-jsonl"), of("claude-code-jsonl"), of("codex-jsonl"), of()]).toEqual(["pi", "Claude Code", "Codex", undefined]);
  });
});

describe("sessionsView", () => {
  it("lists this workspace's sessions first, then the others, with agent, folder, size and last change", () => {
    const [ours, others] = sessionsView({ sessions, workspaceFolders: ["/home/me/api"], now: NOW });
    expect(ours).toMatchObject({ label: "This workspace", description: "2 sessions", collapsible: "expanded" });
    expect(ours!.children!.map((item) => [item.label, item.description])).toEqual([
      ["Refresh tokens", "12 entries · 3 min ago"],
      ["session c9d0e1f2", "Claude Code · 12 entries · 6 days ago"],
    ]);
    expect(ours!.children![1]).toMatchObject({ accessibilityLabel: "session session c9d0e1f2, Claude Code, 12 entries, 6 days ago" });
    expect(ours!.children![1]!.tooltip).toContain("- written by: Claude Code");
    expect(others).toMatchObject({ label: "Other folders", description: "1 session", collapsible: "collapsed" });
    expect(others!.children!.map((item) => [item.label, item.description])).toEqual([["Fix the footer links", "site · 1 entry · 3 h ago"]]);
  });

  it("opens a session on click and marks the open one", () => {
    const [ours] = sessionsView({ sessions, workspaceFolders: ["/home/me/api"], now: NOW, openSessionId: "a1b2c3d4-1" });
    const open = ours!.children![0]!;
    expect(open.command).toEqual({ command: "baseContext.openSession", title: "Open Session", arguments: ["a1b2c3d4-1"] });
    expect(open.icon).toEqual({ id: "comment-discussion", color: "charts.blue" });
    expect(open.contextValue).toBe("session");
    expect(open.accessibilityLabel).toBe("session Refresh tokens, 12 entries, 3 min ago");
    expect(open.tooltip).toContain("First message: Move the API to JWTs");
  });

  it("opens the other folders when the workspace has none, lists flat without a workspace, and offers more pages", () => {
    const [ours, others] = sessionsView({ sessions, workspaceFolders: ["/elsewhere"], now: NOW, hasMore: true });
    expect(ours!.description).toBe("no sessions");
    expect(others).toMatchObject({ collapsible: "expanded", description: "3 sessions+" });
    expect(others!.children!.at(-1)).toMatchObject({ label: "Load more sessions…", command: { command: "baseContext.loadMoreSessions" } });
    const flat = sessionsView({ sessions, workspaceFolders: [], now: NOW });
    expect(flat.map((item) => item.label)).toEqual(["Refresh tokens", "Fix the footer links", "session c9d0e1f2"]);
    expect(sessionsView({ sessions: [], workspaceFolders: ["/x"], now: NOW })).toEqual([]);
  });

  it("shows search results best first, each with its matching entries, a hit opening its entry", () => {
    const items = sessionsView({
      sessions,
      workspaceFolders: ["/home/me/api"],
      now: NOW,
      search: {
        query: "refresh token",
        results: [
          {
            session: sessions[0]!,
            hitCount: 5,
            nameMatches: true,
            hits: [{ entryId: "3a7f4552", type: "message", role: "assistant", snippet: "Understood: refresh token → cookie `rt`" }],
          },
        ],
      },
    });
    expect(items.map((item) => item.label)).toEqual(["“refresh token”", "Refresh tokens"]);
    expect(items[0]!.description).toBe("1 session, best match first");
    expect(items[1]!.description).toBe("5 matches (name) · 12 entries · 3 min ago");
    expect(items[1]!.children!.map((item) => item.label)).toEqual(["Understood: refresh token → cookie `rt`", "… 4 more matching entries"]);
    expect(items[1]!.children![0]!.command!.arguments).toEqual(["a1b2c3d4-1", "3a7f4552"]);
  });
});

describe("inWorkspace and sessionTitle", () => {
  it("takes a folder and what is inside it, not a sibling with the same start", () => {
    expect(inWorkspace("/home/me/api", ["/home/me/api/"])).toBe(true);
    expect(inWorkspace("/home/me/api/src", ["/home/me/api"])).toBe(true);
    expect(inWorkspace("/home/me/api2", ["/home/me/api"])).toBe(false);
    expect(inWorkspace("C:\\src\\app\\web", ["C:\\src\\app"])).toBe(true);
  });

  it("names a session by its name, else its first message, else its id", () => {
    expect(sessionTitle({ id: "x", name: "  ", firstMessage: "Hello\nworld" })).toBe("Hello world");
    expect(sessionTitle({ id: "0123456789", firstMessage: "a".repeat(100) }, 10)).toBe(`${"a".repeat(9)}…`);
    expect(sessionTitle({ id: "0123456789" })).toBe("session 01234567");
  });
});

describe("applySessionNews", () => {
  it("puts a session another client created or wrote first, drops a deleted one, keeps the rest in order", () => {
    const written = { ...sessions[2]!, entryCount: 13, modifiedAt: "2026-03-10T11:59:00.000Z" };
    const created = session("new-one", "/home/me/api", "2026-03-10T11:58:00.000Z");
    const list = applySessionNews(sessions, [written, created], ["e5f6a7b8-2"]);
    expect(list.map((s) => [s.id, s.entryCount])).toEqual([
      ["c9d0e1f2-3", 13],
      ["new-one", 12],
      ["a1b2c3d4-1", 12],
    ]);
    expect(applySessionNews(list, [], ["no-such-session"])).toEqual(list);
  });
});
