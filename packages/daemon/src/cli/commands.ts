/** The table of CLI commands: name, one-line summary, and the function that runs it. */
export interface Command {
  name: string;
  summary: string;
  run(args: string[]): Promise<number>;
}

export const COMMANDS: Command[] = [
  {
    name: "serve",
    summary: "run the daemon over stdio (JSON-RPC, LSP framing)",
    run: async () => (await import("./serve.js")).serve(),
  },
];

export function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: base-context <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun "base-context <command> --help" for a command's options.\n`;
}
