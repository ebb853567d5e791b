/**
 * The real Codex CLI (`@openai/codex`, a pinned dev dependency of this package) run headlessly as
 * `codex exec`, against a local fake Responses API server: a temporary CODEX_HOME whose
 * config.toml defines a custom `model_providers` entry pointing at the fake, a temporary HOME,
 * and a project folder. Codex writes its rollout under `CODEX_HOME/sessions/YYYY/MM/DD/`.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const CODEX_BIN = fileURLToPath(new URL("../node_modules/.bin/codex", import.meta.url));

/** Why the binary cannot run here (the reason a test states when it skips), or undefined when it runs. */
export function codexUnavailable(): string | undefined {
  const run = spawnSync(CODEX_BIN, ["--version"], { encoding: "utf8", timeout: 30_000 });
  if (run.error) return `the Codex CLI cannot start on this machine: ${run.error.message}`;
  if (run.status !== 0) return `the Codex CLI cannot run on this machine (exit ${run.status}): ${run.stderr.trim().slice(0, 300)}`;
  return undefined;
}

export interface CodexSetup {
  /** CODEX_HOME: config.toml, sessions/. */
  codexHome: string;
  /** The project Codex works in. */
  cwd: string;
  /** The fake server's `…/v1`. */
  baseURL: string;
  /** Codex compacts once its context passes this many tokens. */
  autoCompactTokenLimit?: number;
}

export const CODEX_FAKE_MODEL = "fake-codex-model";
export const CODEX_FAKE_PROVIDER = "fake";

export function writeCodexHome(setup: CodexSetup): void {
  mkdirSync(setup.codexHome, { recursive: true });
  mkdirSync(setup.cwd, { recursive: true });
  const config = [
    `model = "${CODEX_FAKE_MODEL}"`,
    `model_provider = "${CODEX_FAKE_PROVIDER}"`,
    ...(setup.autoCompactTokenLimit !== undefined ? [`model_auto_compact_token_limit = ${setup.autoCompactTokenLimit}`] : []),
    "",
    `[model_providers.${CODEX_FAKE_PROVIDER}]`,
    'name = "Fake Responses API"',
    `base_url = "${setup.baseURL}"`,
    'wire_api = "responses"',
    'env_key = "CODEX_FAKE_API_KEY"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "",
  ].join("\n");
  writeFileSync(join(setup.codexHome, "config.toml"), config);
}

export interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `codex exec <prompt>` (or `codex exec resume --last <prompt>`, which appends to the same
 * rollout) in the project, without sandbox or approvals: the commands the fake model asks for are
 * the test's own, in a temporary folder, and a sandbox may not be available where tests run.
 */
export function codexExec(setup: CodexSetup, prompt: string, options: { resume?: boolean; timeoutMs?: number } = {}): Promise<CodexRun> {
  const args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--color", "never"];
  if (options.resume) args.push("resume", "--last");
  args.push(prompt);
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: join(setup.codexHome, ".."), CODEX_HOME: setup.codexHome };
  env.CODEX_FAKE_API_KEY = "test";
  const timeoutMs = options.timeoutMs ?? 90_000;
  return new Promise((resolve, reject) => {
    const child = spawn(CODEX_BIN, args, { cwd: setup.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`codex ${args.join(" ")} still running after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The rollout files Codex wrote under CODEX_HOME/sessions, oldest first. */
export function rolloutFiles(codexHome: string): string[] {
  const root = join(codexHome, "sessions");
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/^rollout-.*\.jsonl$/.test(entry.name)) found.push(path);
    }
  };
  walk(root);
  return found;
}
