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
import { storeEnvFor } from "./support/engine.js";
import { TEST_NODE } from "./support/test-node.js";

const PYTHON_DIR = join(import.meta.dirname, "..", "examples", "clients", "python");
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** A command line as Python's shlex.split reads it back. */
const shellQuote = (words: string[]) => words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(" ");

describe("the Python client", () => {
  it("runs the scenario: session, appends, OpenAI context, an error, import, compaction, shutdown", { timeout: 120_000 }, async () => {
    const home = dirs.make("bc-python-");
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      BASE_CONTEXT_HOME: home,
      ...storeEnvFor(home),
      BASE_CONTEXT_COMMAND: shellQuote([TEST_NODE, DAEMON_MAIN, "serve"]),
      PYTHONIOENCODING: "utf-8",
    };
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
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      BASE_CONTEXT_HOME: home,
      ...storeEnvFor(home),
      BASE_CONTEXT_COMMAND: shellQuote([TEST_NODE, DAEMON_MAIN, "serve"]),
    };
    const { stdout } = await promisify(execFile)("python3", ["-c", script], { cwd: PYTHON_DIR, env, timeout: 50_000 });
    expect(stdout).toBe("before initialize: -32002 server_not_initialized\nsessions: []\nafter close: None True\n");
  });

  it("offers its model: the daemon's compaction is written by it; an error it raises leads to the fallback", {
    timeout: 60_000,
  }, async () => {
    const home = dirs.make("bc-python-");
    const script = `
import json
from base_context_client import BaseContextClient, BaseContextError

asked = []
def my_model(params, cancelled):
    asked.append(params["purpose"])
    # A stand-in for a real model call: the prompt is in params["messages"], params["system"].
    return {"text": "## Goal\\nWritten by the Python client's model (" + params["purpose"] + ")", "model": "py-model"}

def broken_model(params, cancelled):
    raise BaseContextError(-32803, "the Python model is out of quota", {"status": 429, "retryable": False})

for name, model in [("good", my_model), ("broken", broken_model)]:
    with BaseContextClient() as client:
        client.offer_model(model)
        client.initialize(client_name="python-" + name)
        session = client.request("session/create", {"cwd": "/nonexistent/python-client"})["session"]
        for role, text in [("user", "Fix the login bug."), ("assistant", "Fixed it in login.ts."), ("user", "Add a test.")]:
            message = {"role": role, "content": text} if role == "user" else {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "x", "provider": "x", "model": "x", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}, "stopReason": "stop", "timestamp": 1}
            client.request("entry/append", {"sessionId": session["id"], "entry": {"type": "message", "message": message}})
        result = client.request("compaction/run", {"sessionId": session["id"], "reason": "manual", "settings": {"keepRecentTokens": 1}})
        details = result["entry"]["details"]
        print(name, result["summarizer"], json.dumps(result["entry"]["summary"].splitlines()[1]), details.get("fallback", {}).get("error", "-"))
print("asked", asked)
`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      BASE_CONTEXT_HOME: home,
      ...storeEnvFor(home),
      BASE_CONTEXT_COMMAND: shellQuote([TEST_NODE, DAEMON_MAIN, "serve"]),
    };
    delete env.OPENAI_API_KEY;
    const { stdout } = await promisify(execFile)("python3", ["-c", script], { cwd: PYTHON_DIR, env, timeout: 50_000 });
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toBe('good client:py-model "Written by the Python client\'s model (compaction)" -');
    expect(lines[1]).toMatch(
      /^broken extractive ".*" summarizer client failed: the client "python-broken" answered model\/complete with an error \(-32803\): the Python model is out of quota$/,
    );
    expect(lines[2]).toBe("asked ['compaction']");
  });
});
