/**
 * The real pi (`@mariozechner/pi-coding-agent`, the pi extension example's dev dependency) in RPC
 * mode, as a pi user runs it headlessly: its agent folder relocated to a temporary folder
 * (PI_CODING_AGENT_DIR) holding a models.json whose custom OpenAI-compatible provider is the
 * local fake server, offline, with the Base Context extension loaded by `-e`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { waitFor } from "./wait.js";
import { TEST_NODE } from "./test-node.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/pi-extension/", import.meta.url));
export const PI_CLI = join(EXAMPLE, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
export const PI_EXTENSION = join(EXAMPLE, "base-context", "index.ts");
/** pi's SDK (createAgentSession, SessionManager…), for what RPC mode cannot do. */
export const PI_SDK = join(EXAMPLE, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "index.js");

/** One line pi wrote on stdout: a response to a command, an event, or an extension UI request. */
export type PiOutput = { type: string; [key: string]: unknown };

export interface PiSetup {
  /** pi's agent folder (models.json, settings.json, sessions/). */
  agentDir: string;
  /** The project pi runs in. */
  cwd: string;
  /** The fake server's URL (`…/v1`). */
  baseURL: string;
  /** pi's compaction settings (a small keepRecentTokens makes a short session compactable). */
  compaction?: { reserveTokens?: number; keepRecentTokens?: number };
  env?: Record<string, string | undefined>;
  /**
   * How pi gets the extension: `-e` (default), or installed as the README says, linked into the
   * project's `.pi/extensions/` where pi discovers it.
   */
  install?: "flag" | "project";
  /** More of pi's command-line arguments (e.g. `--thinking high`, or another `--provider`/`--model`). */
  args?: string[];
}

export interface PiRpc {
  readonly process: ChildProcess;
  /** Every line pi wrote on stdout so far. */
  readonly output: PiOutput[];
  stderr(): string;
  /** Sends a command and resolves with its response. */
  command(command: Record<string, unknown>, timeoutMs?: number): Promise<PiOutput & { success: boolean; data?: unknown; error?: string }>;
  /** Sends a prompt and waits for the agent to finish its run. */
  prompt(message: string): Promise<void>;
  /** pi's session file, as pi wrote it: one JSON object per line. */
  sessionLines(): Record<string, unknown>[];
  close(): Promise<void>;
}

export const FAKE_PROVIDER = "fake";
export const FAKE_MODEL = "fake-model";
/** A reasoning model on the same fake server, whose provider takes OpenAI's `reasoning_effort`. */
export const FAKE_THINKING_PROVIDER = "fake-thinking";
export const FAKE_THINKING_MODEL = "fake-thinker";

export function writePiAgentDir(setup: Pick<PiSetup, "agentDir" | "baseURL" | "compaction">): void {
  mkdirSync(setup.agentDir, { recursive: true });
  const models = {
    providers: {
      [FAKE_PROVIDER]: {
        baseUrl: setup.baseURL,
        api: "openai-completions",
        apiKey: "fake-key",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: FAKE_MODEL, name: "Fake model", contextWindow: 128_000, maxTokens: 4_096 }],
      },
      [FAKE_THINKING_PROVIDER]: {
        baseUrl: setup.baseURL,
        api: "openai-completions",
        apiKey: "fake-key",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: true },
        models: [{ id: FAKE_THINKING_MODEL, name: "Fake reasoning model", reasoning: true, contextWindow: 128_000, maxTokens: 4_096 }],
      },
    },
  };
  writeFileSync(join(setup.agentDir, "models.json"), JSON.stringify(models, null, 2));
  const settings = {
    defaultProvider: FAKE_PROVIDER,
    defaultModel: FAKE_MODEL,
    compaction: { enabled: false, ...setup.compaction },
    enableInstallTelemetry: false,
  };
  writeFileSync(join(setup.agentDir, "settings.json"), JSON.stringify(settings, null, 2));
}

export async function startPi(setup: PiSetup): Promise<PiRpc> {
  writePiAgentDir(setup);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PI_CODING_AGENT_DIR: setup.agentDir,
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    OPENAI_API_KEY: undefined,
    ...setup.env,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const args = [PI_CLI, "--mode", "rpc", "--provider", FAKE_PROVIDER, "--model", FAKE_MODEL, ...(setup.args ?? [])];
  if (setup.install === "project") {
    mkdirSync(join(setup.cwd, ".pi", "extensions"), { recursive: true });
    symlinkSync(EXAMPLE, join(setup.cwd, ".pi", "extensions", "base-context"), "dir");
  } else {
    args.push("-e", PI_EXTENSION);
  }
  const child = spawn(TEST_NODE, args, { cwd: setup.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  const output: PiOutput[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    try {
      output.push(JSON.parse(line) as PiOutput);
    } catch {
      output.push({ type: "not-json", line });
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let ids = 0;
  /** waitFor, failing with what pi said last. */
  const explained = async (check: () => boolean, timeoutMs: number, what: string): Promise<void> => {
    try {
      await waitFor(check, { timeoutMs });
    } catch {
      throw new Error(
        `${what} within ${timeoutMs} ms; pi's stderr:\n${stderr}\nlast output:\n${output
          .slice(-5)
          .map((line) => JSON.stringify(line))
          .join("\n")}`,
      );
    }
  };

  const rpc: PiRpc = {
    process: child,
    output,
    stderr: () => stderr,
    async command(command, timeoutMs = 60_000) {
      const id = `t${++ids}`;
      child.stdin!.write(`${JSON.stringify({ ...command, id })}\n`);
      let response: PiOutput | undefined;
      await explained(
        () => (response = output.find((line) => line.type === "response" && line["id"] === id)) !== undefined,
        timeoutMs,
        `pi did not answer ${JSON.stringify(command)}`,
      );
      return response as PiOutput & { success: boolean; data?: unknown; error?: string };
    },
    async prompt(message) {
      const before = output.filter((line) => line.type === "agent_end").length;
      const response = await rpc.command({ type: "prompt", message });
      if (!response.success) throw new Error(`prompt failed: ${response.error}`);
      await explained(() => output.filter((line) => line.type === "agent_end").length > before, 60_000, "pi's agent run did not end");
    },
    sessionLines() {
      const state = output.find(
        (line) => line.type === "response" && line["command"] === "get_state" && (line["data"] as { sessionFile?: string })?.sessionFile,
      );
      const file = (state?.["data"] as { sessionFile: string } | undefined)?.sessionFile;
      if (!file) throw new Error("ask get_state first: the session file is named there");
      return readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin!.end();
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
  return rpc;
}
