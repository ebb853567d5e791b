/**
 * The dependency-free Python client (examples/clients/python) against the built daemon: its
 * scenario runs end to end — framing (UTF-8 included), replies, an error reply as
 * BaseContextError, notifications, import, compaction and a clean shutdown.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { DAEMON_MAIN } from "./support/daemon.js";
import { tempDirs } from "./support/temp-dir.js";

const PYTHON_DIR = join(import.meta.dirname, "..", "examples", "clients", "python");
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** A command line as Python's shlex.split reads it back. */
const shellQuote = (words: string[]) => words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(" ");

describe("the Python client", () => {
  it("runs the scenario: session, appends, OpenAI context, an error, import, compaction, shutdown", { timeout: 120_000 }, async () => {
    const home = dirs.make("bc-python-");
    const env: NodeJS.ProcessEnv = { ...process.env, BASE_CONTEXT_HOME: home, BASE_CONTEXT_COMMAND: shellQuote([process.execPath, DAEMON_MAIN, "serve"]), PYTHONIOENCODING: "utf-8" };
    delete env.OPENAI_API_KEY;
    const { stdout } = await promisify(execFile)("python3", ["scenario.py"], { cwd: PYTHON_DIR, env, timeout: 110_000 });

    expect(stdout).toMatch(/^Connected to base-context \d+\.\d+\.\d+ \(protocol 1\)$/m);
    expect(stdout).toMatch(/^Created session [0-9a-f-]{36}$/m);
    expect(stdout.match(/^Appended (user|assistant|toolResult)\s+entry [0-9a-f]{8} \(\d+ tokens\)$/gm)).toHaveLength(4);
    expect(stdout).toMatch(/^Context in OpenAI chat format: 4 messages, \d+ tokens$/m);
    expect(stdout).toContain("  user      Why does the login accept an empty password? (naïve check — ✓ UTF-8)");
    expect(stdout).toContain('  assistant Let me read the handler. → read({"path":"src/auth/login.ts"})');
    expect(stdout).toMatch(/^  tool      if \(!user/m);
    expect(stdout).toContain('Error as expected: code -31999, data.code session_not_found: no session with id "no-such-session"');
    expect(stdout).toContain("Imported refactor-auth.jsonl: session 5b0c2f4e-8d1a-4c3b-9e6f-2a7d1c0b9e13, 69 entries, 0 lines skipped");
    expect(stdout).toContain("  … compaction started (manual)\n  … compaction ended: committed\n");
    expect(stdout).toMatch(/^Compaction committed by extractive: context now \d+ tokens$/m);
    expect(stdout.trimEnd().split("\n").at(-1)).toBe("Shut down: the daemon exited with code 0");
  });

  it("raises BaseContextError for a request before initialize, and reports a daemon that is gone", { timeout: 60_000 }, async () => {
    const home = dirs.make("bc-python-");
    const script = [
      "from base_context_client import BaseContextClient, BaseContextError",
      "client = BaseContextClient()",
      "try:",
      "    client.request('session/list', {})",
      "except BaseContextError as error:",
      "    print('before initialize:', error.code, error.data_code)",
      "client.initialize()",
      "print('sessions:', client.request('session/list', {})['sessions'])",
      "client.close()",
      "try:",
      "    client.request('session/list', {})",
      "except BaseContextError as error:",
      "    print('after close:', error.code, error.message.startswith('the daemon is gone'))",
    ].join("\n");
    const env: NodeJS.ProcessEnv = { ...process.env, BASE_CONTEXT_HOME: home, BASE_CONTEXT_COMMAND: shellQuote([process.execPath, DAEMON_MAIN, "serve"]) };
    const { stdout } = await promisify(execFile)("python3", ["-c", script], { cwd: PYTHON_DIR, env, timeout: 50_000 });
    expect(stdout).toBe("before initialize: -32002 server_not_initialized\nsessions: []\nafter close: None True\n");
  });
});
