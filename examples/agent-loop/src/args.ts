/** The command's arguments: `parseCli(argv)` validates them, or throws a `UsageError` that says what is wrong. */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_MAX_STEPS } from "./loop.js";

export const DEFAULT_CONTEXT_WINDOW = 128_000;

export const USAGE = `Usage: node examples/agent-loop/dist/main.js --base-url URL --model NAME [options] "prompt" ["prompt" …]

An agent loop on Base Context: every message is stored by the daemon, the model is sent the
context the daemon builds, and after each reply the daemon says (turn/end) whether to compact,
retry or go on. The model can read the workspace with two tools, read and ls.

Options:
  --base-url URL          OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (required)
  --model NAME            the model to call (required)
  --api-key-env VAR       environment variable holding the endpoint's API key (default OPENAI_API_KEY)
  --context-window N      the model's context window in tokens (default ${DEFAULT_CONTEXT_WINDOW})
  --cwd DIR               the workspace the tools may read, and the session's folder (default: here)
  --session ID            continue this session instead of starting a new one
  --max-steps N           model calls per prompt before giving up (default ${DEFAULT_MAX_STEPS})
  --verbose               also show the daemon's own log
  -h, --help              this help

Several prompts run one after the other, in one session. A prompt "-" reads more prompts from
stdin, one per line, until it closes. Answers go to stdout, what happened each turn to stderr.
Exit codes: 0 done, 1 a model call or the daemon failed, 2 wrong usage.
`;

export class UsageError extends Error {}

export interface CliOptions {
  baseURL: string;
  model: string;
  apiKeyEnv: string;
  contextWindow: number;
  cwd: string;
  sessionId?: string | undefined;
  maxSteps: number;
  verbose: boolean;
  prompts: string[];
  readStdin: boolean;
}

export function parseCli(argv: string[]): CliOptions | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        "base-url": { type: "string" },
        model: { type: "string" },
        "api-key-env": { type: "string", default: "OPENAI_API_KEY" },
        "context-window": { type: "string" },
        cwd: { type: "string" },
        session: { type: "string" },
        "max-steps": { type: "string" },
        verbose: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    // node:util's messages name the option, e.g. "Unknown option '--modle'".
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return "help";
  const baseURL = required(values["base-url"], "--base-url URL");
  if (!/^https?:\/\//.test(baseURL) || !URL.canParse(baseURL)) throw new UsageError(`--base-url must be an http(s) URL, got "${baseURL}"`);
  const cwd = resolve(values.cwd ?? ".");
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new UsageError(`--cwd ${values.cwd ?? "."} is not a folder`);
  const prompts = positionals.filter((prompt) => prompt !== "-");
  if (positionals.length === 0) throw new UsageError('give at least one prompt (or "-" to read prompts from stdin)');
  if (prompts.some((prompt) => prompt.trim() === "")) throw new UsageError("a prompt is empty");
  return {
    baseURL,
    model: required(values.model, "--model NAME"),
    apiKeyEnv: values["api-key-env"],
    contextWindow: positiveInt(values["context-window"], "--context-window", DEFAULT_CONTEXT_WINDOW),
    cwd,
    sessionId: values.session,
    maxSteps: positiveInt(values["max-steps"], "--max-steps", DEFAULT_MAX_STEPS),
    verbose: values.verbose,
    prompts,
    readStdin: positionals.includes("-"),
  };
}

function required(value: string | undefined, what: string): string {
  if (value === undefined || value.trim() === "") throw new UsageError(`missing ${what}`);
  return value;
}

function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0)
    throw new UsageError(`${name} must be a positive integer, got "${value}"`);
  return n;
}
