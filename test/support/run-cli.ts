/**
 * Runs the built `base-context` command as a user would, with its own BASE_CONTEXT_HOME, and
 * returns what it printed and its exit status (on the postgres project, with the home's database).
 */
import { spawn } from "node:child_process";
import { pathWithCli } from "./cli-on-path.js";
import { DAEMON_MAIN } from "./daemon.js";
import { storeEnvFor } from "./engine.js";
import { TEST_NODE } from "./test-node.js";

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
  /** The program to run (default DAEMON_MAIN). */
  main?: string;
  /** Written to its stdin, which is then closed (default: no stdin). */
  input?: string;
}

export function runCli(args: readonly string[], options: CliOptions): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: pathWithCli(),
    BASE_CONTEXT_HOME: options.home,
    ...storeEnvFor(options.home),
    OPENAI_API_KEY: undefined,
    NO_COLOR: undefined,
    ...options.env,
  };
  return runNodeProgram(options.main ?? DAEMON_MAIN, args, { ...options, env });
}

/** Runs a Node program to its end with `env` as given (undefined values removed): its output and exit status. */
export function runNodeProgram(
  main: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string | undefined; timeoutMs?: number | undefined; input?: string | undefined },
): Promise<CliRun> {
  const env = { ...options.env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const timeoutMs = options.timeoutMs ?? 20_000;
  return new Promise((resolve, reject) => {
    const child = spawn(TEST_NODE, [main, ...args], { env, cwd: options.cwd, stdio: [options.input !== undefined ? "pipe" : "ignore", "pipe", "pipe"] });
    if (options.input !== undefined) {
      // A program that exits without reading its input is its own business, not a test failure here.
      child.stdin!.on("error", () => undefined);
      child.stdin!.end(options.input);
    }
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${main} ${args.join(" ")} still running after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
