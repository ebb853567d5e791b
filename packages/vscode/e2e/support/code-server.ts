/**
 * The real VS Code for the editor test: `code-server` (VS Code's own build, served to a browser),
 * pinned, on the pinned Node 24 (test/support/other-node.ts), installed once into
 * node_modules/.cache/base-context/ like the suite's Node releases. Its install builds native
 * modules with node-gyp against that Node's headers (`npm_config_nodedir`; Debian's libkrb5-dev
 * for the kerberos module) and takes minutes; later runs reuse it.
 *
 * Each test gets its own code-server: a temporary user-data and extensions folder, a HOME of its
 * own (code-server writes its config and logs under it), a free port on 127.0.0.1, no auth.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureNode, nodePaths } from "../../../../test/support/other-node.js";

export const CODE_SERVER_VERSION = "4.139.1";

const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));
const CACHE = join(ROOT, "node_modules", ".cache", "base-context");

export function codeServerPaths(): { dir: string; entry: string } {
  const dir = join(CACHE, `code-server-${CODE_SERVER_VERSION}`);
  return { dir, entry: join(dir, "node_modules", "code-server", "out", "node", "entry.js") };
}

/** Installs code-server (with its VS Code and native modules) unless it is there; returns its entry script. */
export function ensureCodeServer(): string {
  const { dir, entry } = codeServerPaths();
  if (existsSync(entry) && existsSync(join(dir, "node_modules", "code-server", "lib", "vscode", "node_modules"))) return entry;
  const node = ensureNode(24);
  const nodeDir = nodePaths(24).dir;
  mkdirSync(CACHE, { recursive: true });
  const staging = mkdtempSync(join(CACHE, `staging-code-server-${CODE_SERVER_VERSION}-`));
  try {
    writeFileSync(join(staging, "package.json"), '{ "private": true }\n');
    // npm under Node 24 (code-server's postinstall checks the Node that runs it), every script it
    // starts too (PATH), native modules built against Node 24's headers.
    execFileSync(node, [npmCli(), "install", "--no-audit", "--no-fund", "--no-package-lock", `code-server@${CODE_SERVER_VERSION}`], {
      cwd: staging,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...withoutNpmConfig(process.env), PATH: `${join(nodeDir, "bin")}:${process.env.PATH ?? ""}`, npm_config_nodedir: nodeDir },
      timeout: 1_800_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (!existsSync(join(staging, "node_modules", "code-server", "lib", "vscode", "node_modules"))) {
      throw new Error("code-server installed without its VS Code modules (its postinstall did not run)");
    }
    try {
      renameSync(staging, dir);
    } catch (error) {
      if (!existsSync(entry)) throw error;
    }
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().slice(-4000);
    throw new Error(`installing code-server ${CODE_SERVER_VERSION} failed: ${(error as Error).message}${stderr ? `\n${stderr}` : ""}`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return entry;
}

/**
 * The environment without what a package manager running this test put in it (`npm_config_*`,
 * `npm_package_*`, …): npm reads `npm_config_*` as its own settings, so the outer pnpm's
 * `npm_config_user_agent` (naming Node 20) reached code-server's postinstall, which refused to run.
 */
function withoutNpmConfig(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !/^(npm|pnpm)_/i.test(key)));
}

/** npm's own script, run under Node 24 (the `npm` on PATH is a shell script for the machine's Node). */
function npmCli(): string {
  const prefix = execFileSync("npm", ["prefix", "-g"], { encoding: "utf8" }).trim();
  const candidates = [join(prefix, "lib", "node_modules", "npm", "bin", "npm-cli.js"), join(prefix, "node_modules", "npm", "bin", "npm-cli.js")];
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`npm's npm-cli.js not found under ${prefix}`);
  return found;
}

export interface CodeServerFolders {
  home: string;
  userData: string;
  extensions: string;
}

/** A code-server's own folders, with the user settings given. */
export function codeServerFolders(base: string, settings: Record<string, unknown>): CodeServerFolders {
  const folders = { home: join(base, "home"), userData: join(base, "user-data"), extensions: join(base, "extensions") };
  for (const folder of Object.values(folders)) mkdirSync(folder, { recursive: true });
  mkdirSync(join(folders.userData, "User"), { recursive: true });
  writeFileSync(join(folders.userData, "User", "settings.json"), JSON.stringify(settings, null, 2));
  return folders;
}

function codeServerEnv(folders: CodeServerFolders, env: Record<string, string>): NodeJS.ProcessEnv {
  const nodeDir = nodePaths(24).dir;
  return {
    ...process.env,
    HOME: folders.home,
    XDG_CONFIG_HOME: join(folders.home, ".config"),
    XDG_DATA_HOME: join(folders.home, ".local", "share"),
    XDG_CACHE_HOME: join(folders.home, ".cache"),
    PATH: `${join(nodeDir, "bin")}:${process.env.PATH ?? ""}`,
    ...env,
  };
}

/** `code-server --install-extension <vsix>` into the folders' extensions folder. */
export function installExtension(entry: string, folders: CodeServerFolders, vsix: string): void {
  const node = nodePaths(24).node;
  execFileSync(
    node,
    [entry, "--user-data-dir", folders.userData, "--extensions-dir", folders.extensions, "--install-extension", vsix],
    { env: codeServerEnv(folders, {}), stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 },
  );
}

export interface RunningCodeServer {
  url: string;
  process: ChildProcess;
  /** What it logged so far (its stdout and stderr go to a file, not to the test's pipes). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts code-server on a free port of 127.0.0.1 and resolves once it listens. Its output goes to
 * `<base>/code-server.log`: a pipe to the test would be held open by every process it starts (the
 * extension host, the daemon), and keep the test's worker from ending.
 */
export async function startCodeServer(
  entry: string,
  folders: CodeServerFolders,
  workspace: string,
  env: Record<string, string>,
): Promise<RunningCodeServer> {
  const port = await freePort();
  const node = nodePaths(24).node;
  const args = [
    entry,
    "--auth", "none",
    "--bind-addr", `127.0.0.1:${port}`,
    "--user-data-dir", folders.userData,
    "--extensions-dir", folders.extensions,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    "--ignore-last-opened",
    workspace,
  ];
  const logPath = join(folders.home, "..", "code-server.log");
  const log = openSync(logPath, "w");
  const child = spawn(node, args, { env: codeServerEnv(folders, env), stdio: ["ignore", log, log], detached: true });
  closeSync(log);
  const output = () => (existsSync(logPath) ? readFileSync(logPath, "utf8") : "");
  const started = Date.now();
  while (!/HTTP server listening on/.test(output())) {
    if (child.exitCode !== null) throw new Error(`code-server exited (${child.exitCode}) before listening:\n${output()}`);
    if (Date.now() - started > 120_000) {
      await killTree(child.pid!);
      throw new Error(`code-server did not listen within 120 s:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url: `http://127.0.0.1:${port}/`, process: child, output, stop: () => killTree(child.pid!) };
}

/**
 * Ends a process and everything it started (the extension host, the daemon, file watchers; some
 * start process groups of their own, so the group is not enough): SIGTERM to all, then SIGKILL to
 * whatever is left after a moment.
 */
export async function killTree(pid: number): Promise<void> {
  const all = [pid, ...descendants(pid)];
  signal(all, "SIGTERM");
  for (let waited = 0; waited < 5000 && all.some(alive); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  signal([...all, ...all.flatMap(descendants)].filter(alive), "SIGKILL");
}

function descendants(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    let children: number[] = [];
    try {
      for (const task of readdirSync(`/proc/${parent}/task`)) {
        children.push(...readFileSync(`/proc/${parent}/task/${task}/children`, "utf8").split(/\s+/).filter(Boolean).map(Number));
      }
    } catch {
      children = [];
    }
    for (const child of children) {
      if (found.includes(child)) continue;
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function signal(pids: readonly number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // Already gone.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
