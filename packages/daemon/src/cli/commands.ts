/** The table of CLI commands: name, one-line summary, and the function that runs it. */
export interface Command {
  name: string;
  summary: string;
  run(args: string[]): Promise<number>;
}

export const COMMANDS: Command[] = [
  {
    name: "serve",
    summary: "run the daemon: JSON-RPC over stdio, or over a Unix socket with --socket",
    run: async (args) => (await import("./serve.js")).serveCommand(args),
  },
  {
    name: "sessions",
    summary: "list sessions, newest first; search everything they say",
    run: async (args) => (await import("./sessions.js")).sessionsCommand(args),
  },
  { name: "rename", summary: "name a session", run: async (args) => (await import("./rename.js")).renameCommand(args) },
  {
    name: "delete",
    summary: "delete a session with all its entries",
    run: async (args) => (await import("./delete.js")).deleteCommand(args),
  },
  {
    name: "show",
    summary: "print a session's context as the LLM sees it, with token counts",
    run: async (args) => (await import("./show.js")).showCommand(args),
  },
  {
    name: "import",
    summary: "import a pi session file (JSONL, versions 1–3)",
    run: async (args) => (await import("./import.js")).importCommand(args),
  },
  {
    name: "export",
    summary: "write a session as a pi JSONL file (or to stdout)",
    run: async (args) => (await import("./export.js")).exportCommand(args),
  },
  {
    name: "tree",
    summary: "draw a session's tree; on a terminal, pick an entry to go to",
    run: async (args) => (await import("./tree.js")).treeCommand(args),
  },
  {
    name: "label",
    summary: "label an entry without moving the session, or clear its label",
    run: async (args) => (await import("./label.js")).labelCommand(args),
  },
  {
    name: "navigate",
    summary: "move a session to another entry, optionally summarizing the branch left",
    run: async (args) => (await import("./navigate.js")).navigateCommand(args),
  },
  {
    name: "compact",
    summary: "compact a session now (a pi .jsonl file is imported first)",
    run: async (args) => (await import("./compact.js")).compactCommand(args),
  },
  {
    name: "plugins",
    summary: "list plugins; trust or untrust a project's; reload them in running daemons",
    run: async (args) => (await import("./plugins.js")).pluginsCommand(args),
  },
  {
    name: "plugin",
    summary: "plugin new <name>: create a plugin that runs as is (the same commands as plugins)",
    run: async (args) => (await import("./plugins.js")).pluginsCommand(args, undefined, "plugin"),
  },
  {
    name: "settings",
    summary: "show the effective settings and where each value comes from",
    run: async (args) => (await import("./settings.js")).settingsCommand(args),
  },
  {
    name: "doctor",
    summary: "check the database, settings, tokenizer, summarizer and plugins",
    run: async (args) => (await import("./doctor.js")).doctorCommand(args),
  },
];

export function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
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
