/**
 * A real pseudo-terminal for interactive commands: a command run in a detached tmux session on
 * a private tmux server, keys sent with send-keys, the screen read with capture-pane. Tests wait
 * for screen content (waitForScreen), never for time.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "./wait.js";

export interface Terminal {
  /** tmux key names ("Up", "Enter", "q") or, with literal, text typed as is. */
  keys(keys: readonly string[], options?: { literal?: boolean }): void;
  /** The visible screen, lines joined by "\n". */
  screen(): string;
  /** Everything printed in the main screen so far, scrolled-off lines included. */
  transcript(): string;
  /** Waits until the screen matches, and returns it; fails with the last screen shown. */
  waitForScreen(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  close(): void;
}

let sessions = 0;

/**
 * Runs `command` (an argv) in a `width`×`height` terminal with `env`. When it ends, the terminal
 * shows `[exit <status>]` and stays open, so its last output can still be read.
 */
export function openTerminal(
  dir: string,
  command: readonly string[],
  env: Record<string, string>,
  size = { width: 100, height: 24 },
): Terminal {
  const socket = `bc-test-${process.pid}-${++sessions}`;
  const script = join(dir, `${socket}.sh`);
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      ...Object.entries(env).map(([key, value]) => `export ${key}=${quote(value)}`),
      "unset NO_COLOR OPENAI_API_KEY",
      command.map(quote).join(" "),
      'echo "[exit $?]"',
      "exec sleep 600",
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
  tmux("new-session", "-d", "-s", "t", "-x", String(size.width), "-y", String(size.height), script);
  const screen = () => tmux("capture-pane", "-p", "-t", "t");
  return {
    keys: (keys, options = {}) => void tmux("send-keys", "-t", "t", ...(options.literal ? ["-l"] : []), ...keys),
    screen,
    transcript: () => tmux("capture-pane", "-p", "-S", "-", "-t", "t"),
    async waitForScreen(pattern, timeoutMs = 20_000) {
      let last = "";
      try {
        return await waitFor(
          () => {
            last = screen();
            return (typeof pattern === "string" ? last.includes(pattern) : pattern.test(last)) ? last : undefined;
          },
          { timeoutMs, intervalMs: 25, message: `screen showing ${String(pattern)}` },
        );
      } catch (error) {
        throw new Error(`${(error as Error).message}\n--- last screen ---\n${last}`);
      }
    },
    close() {
      try {
        tmux("kill-server");
      } catch {
        // already gone
      }
    },
  };
}
