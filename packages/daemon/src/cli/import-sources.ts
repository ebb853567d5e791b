/**
 * Where other agents keep their sessions, for `base-context import --all <agent>`: the folder
 * (moved by the agent's own environment variable, as the agent itself reads it) and the session
 * files in it. One row per agent; Codex's (`~/.codex/sessions`, `CODEX_HOME`) goes beside Claude Code's.
 */
import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ImportFormat } from "@base-context/protocol";

export interface AgentSessions {
  readonly agent: string;
  readonly format: ImportFormat;
  /** The folder holding the agent's sessions, as the agent finds it from its environment. */
  folder(env: NodeJS.ProcessEnv): string;
  /** The environment variable that moves it, for help and messages. */
  readonly envVariable: string;
}

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME !== undefined && env.HOME.length > 0 ? env.HOME : homedir();
}

export const AGENT_SESSIONS: readonly AgentSessions[] = [
  {
    agent: "claude-code",
    format: "claude-code-jsonl",
    envVariable: "CLAUDE_CONFIG_DIR",
    // Transcripts: projects/<project>/<session>.jsonl, subagents in projects/<project>/<session>/subagents/.
    folder: (env) => join(env.CLAUDE_CONFIG_DIR && env.CLAUDE_CONFIG_DIR.length > 0 ? env.CLAUDE_CONFIG_DIR : join(home(env), ".claude"), "projects"),
  },
];

/**
 * Every `*.jsonl` file under `folder`, sorted by path: a session's file (`<id>.jsonl`) comes
 * before its own folder's subagent files (`<id>/subagents/…`), since "." sorts before "/".
 * Symbolic links are not followed (a link loop would never end).
 */
export function sessionFiles(folder: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith(".jsonl")) found.push(path);
    }
  };
  walk(folder);
  return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
