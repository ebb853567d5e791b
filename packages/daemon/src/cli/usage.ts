/**
 * The CLI's command names, one-line summaries and usage text: all that `--help` needs, in a module
 * of its own so printing it loads nothing else (the help bundle, docs/architecture.md#start-path-and-bundles).
 */
export interface CommandSummary {
  name: string;
  summary: string;
}

export const COMMAND_SUMMARIES: readonly CommandSummary[] = [
  { name: "serve", summary: "run the daemon: JSON-RPC over stdio, or over a Unix socket with --socket" },
  { name: "sessions", summary: "list sessions, newest first; search everything they say" },
  { name: "rename", summary: "name a session" },
  { name: "delete", summary: "delete a session with all its entries" },
  { name: "show", summary: "print a session's context as the LLM sees it, with token counts" },
  { name: "import", summary: "import a session file: pi's (versions 1–3), Claude Code's or Codex's; again, to add what is new" },
  { name: "export", summary: "write a session as a pi JSONL file (or to stdout)" },
  { name: "tree", summary: "draw a session's tree; on a terminal, pick an entry to go to" },
  { name: "label", summary: "label an entry without moving the session, or clear its label" },
  { name: "navigate", summary: "move a session to another entry, optionally summarizing the branch left" },
  { name: "compact", summary: "compact a session now (a session file is imported first); --dry-run writes nothing" },
  { name: "plugins", summary: "list plugins; trust or untrust a project's; reload them in running daemons" },
  { name: "plugin", summary: "plugin new <name>: create a plugin that runs as is (the same commands as plugins)" },
  { name: "settings", summary: "show the effective settings and where each value comes from" },
  { name: "doctor", summary: "check the database, settings, tokenizer, summarizer and plugins" },
  { name: "claude-code", summary: "install (or remove) the hooks that check and complete Claude Code's compactions" },
  { name: "migrate", summary: "copy every session from the SQLite file into PostgreSQL (--to), or back (--from)" },
];

export function usage(): string {
  const width = Math.max(...COMMAND_SUMMARIES.map((c) => c.name.length));
  const lines = COMMAND_SUMMARIES.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    "Usage: base-context <command> [options]",
    "",
    "A context daemon for LLM agents: sessions as trees of entries, the context the LLM must see,",
    "compaction and branch summaries. Clients spawn `base-context serve` and speak JSON-RPC;",
    "the other commands work on the same database directly.",
    "",
    "Commands:",
    ...lines,
    "",
    "Options:",
    "  -h, --help     show this help (or a command's: base-context <command> --help)",
    "  -v, --version  print the version",
    "",
    "Environment:",
    "  BASE_CONTEXT_HOME  the global folder: settings.json, plugins/, sessions.db (default ~/.base-context)",
    "  BASE_CONTEXT_DB    the database file alone (default $BASE_CONTEXT_HOME/sessions.db)",
    "  BASE_CONTEXT_LOG   log level on stderr: error, warn, info (default), debug",
    "  OPENAI_API_KEY     the summarizer's key (the variable named by summarizer.apiKeyEnv)",
    "  NO_COLOR           no colour in the output",
    "",
    "Commands print results on stdout (JSON with --json) and problems on stderr.",
    "Exit status: 0 ok, 1 failure, 2 usage error.",
    "",
  ].join("\n");
}
