/**
 * The real Claude Code CLI for tests, at a pinned version from the npm registry. Its platform
 * package holds a native binary of some 400 MB, so it is not a dependency of the workspace (every
 * install would fetch it): the first test that needs it installs it with npm into a cache folder
 * outside the clone (BASE_CONTEXT_AGENT_CACHE, default <tmp>/base-context-agents), which later
 * runs reuse. The package's postinstall only copies the same binary, so it is not run.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

export const CLAUDE_CODE_VERSION = "2.1.332";

const run = promisify(execFile);

export type ClaudeBinary = { path: string } | { skip: string };

/** The platform package's name: `@anthropic-ai/claude-code-linux-x64`, `…-linux-x64-musl`, … */
function platformPackage(): string | undefined {
  const arch = process.arch === "x64" || process.arch === "arm64" ? process.arch : undefined;
  if (arch === undefined) return undefined;
  if (process.platform === "darwin") return `@anthropic-ai/claude-code-darwin-${arch}`;
  if (process.platform === "win32") return `@anthropic-ai/claude-code-win32-${arch}`;
  if (process.platform !== "linux") return undefined;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return `@anthropic-ai/claude-code-linux-${arch}${report?.header?.glibcVersionRuntime === undefined ? "-musl" : ""}`;
}

/** Installs Claude Code (once per cache folder) and returns its binary, or why it cannot run here. */
export async function claudeCodeBinary(): Promise<ClaudeBinary> {
  const platform = platformPackage();
  if (platform === undefined) return { skip: `Claude Code ships no binary for ${process.platform}-${process.arch}` };
  const cache = process.env.BASE_CONTEXT_AGENT_CACHE ?? join(tmpdir(), "base-context-agents");
  const folder = join(cache, `claude-code-${CLAUDE_CODE_VERSION}`);
  const binary = join(folder, "node_modules", ...platform.split("/"), process.platform === "win32" ? "claude.exe" : "claude");
  if (!existsSync(binary)) {
    mkdirSync(cache, { recursive: true });
    // Installed beside the final folder, then renamed into place: a test run that stops half-way
    // (or two that install at once) never leaves a half-installed folder that looks complete.
    const staging = mkdtempSync(join(cache, `claude-code-${CLAUDE_CODE_VERSION}-installing-`));
    try {
      await run(
        "npm",
        ["install", "--prefix", staging, "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`],
        { timeout: 15 * 60_000, maxBuffer: 16 << 20 },
      );
      if (!existsSync(join(staging, "node_modules", ...platform.split("/")))) {
        return { skip: `npm installed @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} without its platform package ${platform}` };
      }
      try {
        renameSync(staging, folder);
      } catch (error) {
        // Another run put it in place first: use that one.
        if (!existsSync(binary)) throw error;
      }
    } catch (error) {
      return { skip: `could not install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} from the npm registry: ${(error as Error).message.split("\n")[0]}` };
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  try {
    const { stdout } = await run(binary, ["--version"], { timeout: 60_000 });
    if (!stdout.includes(CLAUDE_CODE_VERSION)) return { skip: `${binary} --version says "${stdout.trim()}", not ${CLAUDE_CODE_VERSION}` };
  } catch (error) {
    return { skip: `the Claude Code binary cannot run on this machine: ${(error as Error).message.split("\n")[0]}` };
  }
  return { path: binary };
}
