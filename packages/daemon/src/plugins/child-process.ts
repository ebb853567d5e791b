/**
 * `plugins.isolation: "process"`: one plugin version in a child process, for plugins the user
 * wants confined rather than merely contained (docs/plugins.md, "Trust model"):
 * - a scrubbed environment: no variable of the daemon's crosses (no API key, so
 *   /proc/self/environ shows none either);
 * - Node's permission model: files may be read only in the plugin's folder and the daemon's own
 *   code and dependencies (its SDK, bootstrap and lent packages); nothing may be written, no
 *   child process started. Worker threads stay allowed: Node runs module loader hooks on one;
 * - an address-space limit (`ulimit -v`, set by /bin/sh before it execs Node), so Buffers
 *   outside the V8 heap are bounded too, and a V8 heap limit;
 * - its own process group, killed as a whole; and it exits when the daemon goes away (its
 *   message socket closes).
 * Messages are one JSON text per line on file descriptor 3, a socket; stdout and stderr are
 * piped into the daemon's log as for a worker thread.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { workerProcessArguments } from "../workers/start-worker.js";
import type { ChannelExit, PluginChannel } from "./channel.js";
import { workerScripts } from "./worker/scripts.js";

export interface ProcessOptions {
  /** The plugin's folder: readable, with everything under it. */
  dir: string;
  /** V8 heap limit of the process. */
  heapMb: number;
  /** Address-space limit of the process (everything: heap, Buffers, code, threads). */
  addressSpaceMb: number;
  /** The longest line (message) read from the process; longer ones are refused unread. */
  maxLineBytes: number;
}

/** Variables a plugin process gets: none of the daemon's, only a neutral PATH and locale. */
const PROCESS_ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" };

/** What a V8 heap exhaustion or a failed allocation prints before the process dies. */
const OUT_OF_MEMORY_OUTPUT = /heap out of memory|Reached heap limit|allocation failed|Cannot allocate memory|std::bad_alloc/i;

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The folder of the package that `specifier` resolves to from the daemon, its real path. */
function packageFolder(specifier: string): string | undefined {
  try {
    const entry = realpathOr(createRequire(import.meta.url).resolve(specifier));
    const marker = `${sep}node_modules${sep}`;
    const at = entry.indexOf(marker);
    // The outermost node_modules: the package and its dependencies, wherever the package
    // manager links them from (pnpm keeps each package in a folder of its own under .pnpm).
    return at >= 0 ? entry.slice(0, at + marker.length - 1) : dirname(entry);
  } catch {
    return undefined;
  }
}

/** Folders a plugin process may read: its own, and the daemon's code and dependencies. */
export function readableFolders(pluginDir: string): string[] {
  const daemonRoot = realpathOr(join(dirname(fileURLToPath(import.meta.url)), "..", ".."));
  const folders = [pluginDir, realpathOr(pluginDir), daemonRoot, join(daemonRoot, "node_modules")];
  for (const specifier of ["sucrase", "openai", "@base-context/protocol", "@base-context/core"]) {
    const folder = packageFolder(specifier);
    if (folder !== undefined) folders.push(folder);
  }
  return [...new Set(folders)];
}

/** The permission model's switch: `--permission` from Node 22.13 on (Node 24 knows no other), before it the experimental one. */
function permissionFlag(): string {
  return process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission";
}

function nodeArguments(options: ProcessOptions): string[] {
  return [
    permissionFlag(),
    ...readableFolders(options.dir).map((folder) => `--allow-fs-read=${folder}${folder.endsWith(sep) ? "" : sep}*`),
    "--allow-worker",
    `--max-old-space-size=${options.heapMb}`,
    // Node warns about the experimental permission model and --allow-worker on every start: noise in the log.
    "--no-warnings",
    ...workerProcessArguments("plugin", workerScripts()),
  ];
}

/** Lines of `stream`, each handed over whole; a line over `maxBytes` is refused, its start given for attribution. */
function readLines(stream: Readable, maxBytes: number, onLine: (line: string) => void, onOversize: (start: string) => void): void {
  let pieces: Buffer[] = [];
  let length = 0;
  let skipping = false;
  stream.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline >= 0; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      if (!skipping && length + piece.length <= maxBytes) onLine(Buffer.concat([...pieces, piece]).toString("utf8"));
      else if (!skipping) onOversize(Buffer.concat([...pieces, piece]).subarray(0, 200).toString("utf8"));
      pieces = [];
      length = 0;
      skipping = false;
      start = newline + 1;
    }
    const rest = chunk.subarray(start);
    if (skipping || rest.length === 0) return;
    if (length + rest.length > maxBytes) {
      // Refused as soon as it is too long: the daemon never holds more than the limit of it.
      onOversize(Buffer.concat([...pieces, rest]).subarray(0, 200).toString("utf8"));
      pieces = [];
      length = 0;
      skipping = true;
      return;
    }
    pieces.push(Buffer.from(rest));
    length += rest.length;
  });
}

export function startProcess(options: ProcessOptions): PluginChannel & { readonly pid: number | undefined } {
  // ulimit -v takes KiB; exec keeps the pid (the process group is the shell's, then Node's).
  const child: ChildProcess = spawn(
    "/bin/sh",
    ["-c", `ulimit -v ${options.addressSpaceMb * 1024} && exec "$0" "$@"`, process.execPath, ...nodeArguments(options)],
    {
      stdio: ["ignore", "pipe", "pipe", "pipe"],
      env: PROCESS_ENV,
      detached: true,
      cwd: options.dir,
    },
  );
  const messages = child.stdio[3] as Readable & { write(text: string): boolean };
  const messageListeners: ((raw: unknown) => void)[] = [];
  const oversizeListeners: ((start: string) => void)[] = [];
  readLines(
    messages,
    options.maxLineBytes,
    (line) => messageListeners.forEach((listener) => listener(line)),
    (start) => oversizeListeners.forEach((listener) => listener(start)),
  );
  messages.on("error", () => undefined); // the process died: its exit says why
  let sawOutOfMemory = false;
  let spawnError: Error | undefined;
  child.stderr!.on("data", (chunk: Buffer) => {
    if (OUT_OF_MEMORY_OUTPUT.test(chunk.toString("utf8"))) sawOutOfMemory = true;
  });
  const exited = new Promise<ChannelExit>((resolve) => {
    child.on("error", (error) => {
      spawnError = error;
      // A process that never started has no exit to wait for.
      if (child.pid === undefined) resolve({ cause: "crash", message: `the plugin's process did not start: ${error.message}` });
    });
    child.once("exit", (code, signal) => {
      if (sawOutOfMemory) resolve({ cause: "oom", message: "the plugin ran out of memory (its process's limits) and was terminated" });
      else if (spawnError !== undefined) resolve({ cause: "crash", message: `the plugin's process did not start: ${spawnError.message}` });
      else
        resolve({
          cause: "crash",
          message: signal !== null ? `the plugin's process was ended by ${signal}` : `the plugin's process exited with code ${code}`,
        });
    });
  });
  const killGroup = (): void => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
  };
  return {
    pid: child.pid,
    stdout: child.stdout!,
    stderr: child.stderr!,
    post: (message) => {
      if (!messages.destroyed) messages.write(`${message}\n`);
    },
    onMessage: (listener) => void messageListeners.push(listener),
    onOversize: (listener) => void oversizeListeners.push(listener),
    onExit: (listener) => void exited.then(listener),
    terminate: async () => {
      killGroup(); // SIGKILL: a process always ends
      await exited;
      return true;
    },
  };
}
