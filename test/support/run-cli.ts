/**
 * Runs the built `base-context` command as a user would, with its own BASE_CONTEXT_HOME, and
 * returns what it printed and its exit status.
 */
import { spawn } from "node:child_process";
import { DAEMON_MAIN } from "./daemon.js";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  home: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Gives up (and fails the test) after this long. */
  timeoutMs?: number;
}

export function runCli(args: readonly string[], options: CliOptions): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, BASE_CONTEXT_HOME: options.home, OPENAI_API_KEY: undefined, NO_COLOR: undefined, ...options.env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DAEMON_MAIN, ...args], { env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`base-context ${args.join(" ")} still running after ${options.timeoutMs ?? 20_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
