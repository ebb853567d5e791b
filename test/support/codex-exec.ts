/**
 * The real Codex CLI (`@openai/codex`, pinned) run headlessly as `codex exec`, against a local
 * fake Responses API server: a temporary CODEX_HOME whose config.toml defines a custom
 * `model_providers` entry pointing at the fake, a temporary HOME, and a project folder. Codex
 * writes its rollout under `CODEX_HOME/sessions/YYYY/MM/DD/`.
 *
 * Its platform package holds a native binary of some 300 MB, so, like Claude Code
 * (claude-code.ts), it is not a dependency of the workspace (every install would fetch it): the
 * first test that needs it installs it with npm into the same cache folder outside the clone
 * (BASE_CONTEXT_AGENT_CACHE, default <tmp>/base-context-agents), which later runs reuse.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

export const CODEX_VERSION = "0.171.0";

const run = promisify(execFile);

export type CodexBinary = { path: string } | { skip: string };

/** Installs Codex (once per cache folder) and returns its launcher, or why it cannot run here. */
export async function codexBinary(): Promise<CodexBinary> {
  const cache = process.env.BASE_CONTEXT_AGENT_CACHE ?? join(tmpdir(), "base-context-agents");
  const folder = join(cache, `codex-${CODEX_VERSION}`);
  // The launcher (a Node script) picks the platform package's binary, as for a user's npm install.
  const launcher = join(folder, "node_modules", "@openai", "codex", "bin", "codex.js");
  if (!existsSync(launcher)) {
    mkdirSync(cache, { recursive: true });
    // Installed beside the final folder, then renamed into place: a run that stops half-way (or
    // two that install at once) never leaves a half-installed folder that looks complete.
    const staging = mkdtempSync(join(cache, `codex-${CODEX_VERSION}-installing-`));
    try {
      await run("npm", ["install", "--prefix", staging, "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", `@openai/codex@${CODEX_VERSION}`], {
        timeout: 15 * 60_000,
        maxBuffer: 16 << 20,
      });
      try {
        renameSync(staging, folder);
      } catch (error) {
        // Another run put it in place first: use that one.
        if (!existsSync(launcher)) throw error;
      }
    } catch (error) {
      return { skip: `could not install @openai/codex@${CODEX_VERSION} from the npm registry: ${(error as Error).message.split("\n")[0]}` };
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  try {
    const { stdout } = await run(process.execPath, [launcher, "--version"], { timeout: 60_000 });
    if (!stdout.includes(CODEX_VERSION)) return { skip: `codex --version says "${stdout.trim()}", not ${CODEX_VERSION}` };
  } catch (error) {
    return { skip: `the Codex CLI cannot run on this machine: ${(error as Error).message.split("\n")[0]}` };
  }
  return { path: launcher };
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
export function codexExec(
  launcher: string,
  setup: CodexSetup,
  prompt: string,
  options: { resume?: boolean; timeoutMs?: number } = {},
): Promise<CodexRun> {
  const args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--color", "never"];
  if (options.resume) args.push("resume", "--last");
  args.push(prompt);
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: join(setup.codexHome, ".."), CODEX_HOME: setup.codexHome };
  env.CODEX_FAKE_API_KEY = "test";
  const timeoutMs = options.timeoutMs ?? 90_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [launcher, ...args], { cwd: setup.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
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
