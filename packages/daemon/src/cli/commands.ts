/** The table of CLI commands: name, one-line summary (usage.ts), and the function that runs it. */
import { COMMAND_SUMMARIES, type CommandSummary } from "./usage.js";

export { usage } from "./usage.js";

export interface Command extends CommandSummary {
  run(args: string[]): Promise<number>;
}

/** Each command's module is loaded when that command runs, never for another one. */
const RUNNERS: Record<string, Command["run"]> = {
  serve: async (args) => (await import("./serve.js")).serveCommand(args),
  sessions: async (args) => (await import("./sessions.js")).sessionsCommand(args),
  rename: async (args) => (await import("./rename.js")).renameCommand(args),
  delete: async (args) => (await import("./delete.js")).deleteCommand(args),
  show: async (args) => (await import("./show.js")).showCommand(args),
  import: async (args) => (await import("./import.js")).importCommand(args),
  export: async (args) => (await import("./export.js")).exportCommand(args),
  tree: async (args) => (await import("./tree.js")).treeCommand(args),
  label: async (args) => (await import("./label.js")).labelCommand(args),
  navigate: async (args) => (await import("./navigate.js")).navigateCommand(args),
  compact: async (args) => (await import("./compact.js")).compactCommand(args),
  plugins: async (args) => (await import("./plugins.js")).pluginsCommand(args),
  plugin: async (args) => (await import("./plugins.js")).pluginsCommand(args, undefined, "plugin"),
  settings: async (args) => (await import("./settings.js")).settingsCommand(args),
  doctor: async (args) => (await import("./doctor.js")).doctorCommand(args),
  migrate: async (args) => (await import("./migrate.js")).migrateCommand(args),
  "claude-code": async (args) => (await import("./claude-code.js")).claudeCodeCommand(args),
};

export const COMMANDS: Command[] = COMMAND_SUMMARIES.map((summary) => {
  const run = RUNNERS[summary.name];
  if (!run) throw new Error(`no runner for the command ${summary.name}`);
  return { ...summary, run };
});
