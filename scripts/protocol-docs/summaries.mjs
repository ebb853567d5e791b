/**
 * What each area and method is for, in one line: the only hand-written part of the reference
 * besides the prose of the index page. A method without a line here is still documented (its
 * schema and example come from the code); the generator names it so a line can be added.
 */
export const AREA_TITLES = {
  lifecycle: "Lifecycle",
  sessions: "Sessions and entries",
  context: "Context",
  compaction: "Compaction and turn boundaries",
  tree: "Tree navigation",
  summarize: "Summaries as a service",
  settings: "Settings",
  plugins: "Plugins",
  model: "The client's model",
};

export const AREA_INTROS = {
  lifecycle:
    "Every connection starts with `initialize` + `initialized` and ends with `shutdown` + `exit`, as in LSP. Before `initialize` requests get -32002; after `shutdown`, -32600.",
  sessions:
    "A session is a tree of entries. Appending makes the new entry a child of the current leaf (or of `parentId`) and moves the leaf to it. Sessions import from and export to pi's JSONL session files.",
  context:
    "What the LLM must see for a session's leaf: compaction summary, kept messages, branch summaries; natively or as OpenAI chat-completions messages.",
  compaction:
    "Compaction replaces the old part of the context with a structured summary and keeps a recent tail. `turn/end` is the per-turn decision in front of it (threshold, overflow recovery, follow-up).",
  tree: "Moving the leaf to another entry, optionally summarizing the branch being left.",
  summarize:
    "For agents that keep their own sessions: the daemon writes a compaction or branch summary of what the agent sends, through the same plugins, summarizers, retention check and repair as a stored one, and stores nothing. See docs/summaries-as-a-service.md.",
  settings: "The effective settings (defaults, global file, project file) and where each value came from.",
  plugins: "Third-party summarizer plugins: what is installed and in which state, reloading, and trusting a project's plugins.",
  model:
    "The one request the daemon sends to its client. A client that offers its model at `initialize` (`capabilities.model.complete: true`) is asked to write the summaries of the work its own requests start (compaction, turn prefix, branch summary, a plugin's `ctx.complete`) when `summarizer.provider` is `\"auto\"`. A client that did not opt in never receives it. The daemon sends `$/cancelRequest` for it when the work is cancelled or `summarizer.timeoutMs` passes; an error reply or no answer is handled like a failing model (retries, then the fallback chain, the reason in the summary entry's `details.fallbacks`).",
};

export const METHOD_SUMMARIES = {
  initialize: "Starts a connection: the client's info and project, the daemon's info and capabilities.",
  initialized: "The client got the `initialize` reply; requests may follow.",
  shutdown:
    "Ends the connection's work: answered once the requests sent before it are, those waiting on a model (`compaction/run`, `turn/end`, `tree/navigate`, `summarize/*`) cancelled first (-32800, as `$/cancelRequest`); only `exit` is accepted afterwards.",
  exit: "Ends the connection (and a stdio daemon: exit code 0 after `shutdown`, else 1).",
  "log/message": "A warning or error the daemon logged, for the client to show.",
  "session/create": "Creates an empty session.",
  "session/list":
    "Lists sessions, most recently modified first; filter by `cwd` or search name and first message with `query`; paged with `cursor`.",
  "session/search":
    "Full-text search of what sessions say (SQLite FTS5): sessions best match first, each with its matching entries and a snippet.",
  "session/rename": "Names a session by appending a `session_info` entry (pi's way), so the name survives export.",
  "session/get": "A session's header, current leaf and entry count.",
  "session/delete": "Deletes a session and all its entries.",
  "session/fork": "A new session holding the path root → `entryId` of another one.",
  "session/import":
    "Imports a pi JSONL session file (versions 1–3), from a path or inline content; unreadable lines are skipped and listed.",
  "session/export": "The session as pi JSONL: returned as `content`, or written to `path`.",
  "session/branch": "Moves the leaf to an entry (or before the first one with `null`); nothing is summarized or appended.",
  "session/path": "The entries from the root to the leaf (or to `leafId`).",
  "session/tree": "The whole tree of entries with labels and the current leaf; `flat: true` for deep sessions.",
  "entry/append":
    "Appends one entry under the leaf (or `parentId`); the daemon assigns id, parentId and timestamp. A `requestId` makes retries safe.",
  "entry/appendMany": "Appends several entries in one transaction, each under the previous one.",
  "entry/get": "One entry and its stored token count.",
  "label/set": "Labels an entry (or clears its label with `null`) by appending a `label` entry.",
  "entry/didAppend": "Another client of a shared daemon (`serve --socket`) appended to a session this client has open.",
  "session/watch": "Starts (or stops) `session/didChange` news of every session in the store, whoever writes it.",
  "session/didChange":
    "Sessions created, written or deleted since the last news, by any client or process on the same store (after `session/watch`).",
  "context/build":
    "The messages the LLM must see for the leaf (or `leafId`), with the model, thinking level and token total (and each message's with `messageTokens`).",
  "context/usage": "How full the context is for a model window, and whether it should be compacted now.",
  "compaction/prepare": "A dry run: what a compaction would summarize and keep, without writing anything.",
  "compaction/run":
    "Compacts the session: summarizes the old part and commits a `compaction` entry. Cancellable; reports `$/progress` with a `workDoneToken`.",
  "compaction/status": "The latest compaction jobs of a session, or the jobs of a `requestId`.",
  "turn/end": "The client finished an agent turn: the daemon checkpoints (compacts) when needed and says whether to continue or retry.",
  "compaction/didStart": "A compaction of a session started.",
  "compaction/didEnd": "A compaction of a session ended, with its status and the entry it committed.",
  "tree/navigate": "Moves the leaf to `targetId`, optionally summarizing the branch left (a `branch_summary` entry). Cancellable.",
  "tree/didNavigate": "A session's leaf moved through `tree/navigate`.",
  "summarize/compaction":
    "A compaction summary of the messages sent (and a split turn's prefix), with file lists and retention in `details`; nothing stored. Cancellable; `$/progress` with a `workDoneToken`.",
  "summarize/branch":
    "A branch summary of the entries sent (the branch being left), with file lists and retention in `details`; nothing stored. Cancellable.",
  "settings/get": "The effective settings for a project, where each value came from, and the problems of invalid files.",
  "settings/didChange": "A settings file changed; read the settings again.",
  "plugins/list": "The installed plugins, their state and last error.",
  "plugins/reload": "Reloads one plugin from its files, or rescans every plugin folder.",
  "project/trust": "Trusts (or stops trusting) a project, so its own plugins may run.",
  "plugins/didChange": "The set or state of plugins changed.",
  "model/complete":
    "The daemon asks the client's own model for a completion (a summary, or a plugin's `ctx.complete`); sent only to a client that offered its model.",
  "plugins/didError": "A plugin failed (timeout, crash, out of memory, invalid result, exception, activation); the default path continued.",
};
