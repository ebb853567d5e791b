/**
 * A stdio daemon's protocol bytes go to a descriptor of their own, never to file descriptor 1.
 *
 * Plugins run inside the daemon (worker threads share the process's descriptors), and any code
 * can write to fd 1 directly (`fs.writeSync(1, …)`), past every stream the daemon controls. If
 * fd 1 were the protocol stream, such bytes would reach the client as forged messages or as
 * garbage that stops its frame reader. So, first thing at start-up, the daemon takes a second
 * descriptor to whatever fd 1 is (the client's pipe or socket) for the protocol, and points fd 1
 * at stderr — or at /dev/null when stderr cannot be reopened (a socket) — so stray output is
 * harmless.
 *
 * Node has no dup(): a pipe, terminal or file is reopened through /proc/self/fd/1 (a new
 * descriptor to the same pipe); a socket cannot be reopened that way, so a short-lived helper
 * process that inherited it sends it back over its IPC channel, which hands this process a new
 * descriptor to the same socket. fd 1 is then closed and reopened at once (a new descriptor
 * takes the lowest free number), before the daemon opens anything else.
 *
 * That helper is a whole Node process: waiting for it held up the `initialize` reply. So over a
 * socket the protocol starts on fd 1 itself, through a stream that switches to the copy once the
 * helper has sent it (`guardFd1`, started once the daemon is built and the client is quiet, or by
 * the first need of a plugin). Until then only the daemon's own code runs, which writes nothing
 * to fd 1; plugins, the only code that might, are loaded after the switch (fd1-guard.ts).
 */
import { closeSync, constants, createWriteStream, fstatSync, openSync, type BigIntStats } from "node:fs";
import { Socket } from "node:net";
import type { Writable } from "node:stream";
import { SwitchingStream } from "./switching-stream.js";
import { registerFd1Guard } from "../fd1-guard.js";
import { log } from "../log.js";

/** Where fd 1 points once the protocol has its own descriptor. */
export type Fd1Target = "stderr" | "/dev/null" | "unchanged";

/**
 * How long the helper process may take to send fd 1 back. Past it the protocol stays on fd 1 and
 * plugins run in child processes (fd1-guard.ts). BASE_CONTEXT_FD1_HELPER_TIMEOUT_MS sets it (the
 * tests make the helper "slow" with it).
 */
function helperTimeoutMs(): number {
  const set = Number(process.env.BASE_CONTEXT_FD1_HELPER_TIMEOUT_MS);
  return Number.isFinite(set) && set >= 0 ? set : 10_000;
}

/**
 * As bigint stats on purpose: plain stats go through a buffer Node shares with its module
 * resolver, whose realpath reads the file type left there by the last stat; a socket's type left
 * behind made later imports skip resolving symlinks (pnpm's node_modules are symlinks).
 */
function stat(fd: number): BigIntStats | undefined {
  try {
    return fstatSync(fd, { bigint: true });
  } catch {
    return undefined;
  }
}

async function receiveSocketCopy(): Promise<Socket> {
  // Loaded here, not at start-up: child_process (and dgram, which it loads) would be loaded before
  // the `initialize` reply, and most daemons never need the helper (stdio over pipes).
  const { spawn } = await import("node:child_process");
  const { workerProcessArguments } = await import("../workers/start-worker.js");
  return new Promise((resolve, reject) => {
    // The helper (socket-helper.ts) sends the socket it inherits as its fd 4 back; the daemon
    // receives a new descriptor to the same socket. Not as the helper's own stdout: a descriptor
    // shares its blocking mode with every copy of it, and a child's descriptors 0-2 are made
    // blocking when it starts (libuv) and put back as they were found when Node exits. The
    // daemon's copy then turned blocking, and its first write to a client that was not reading
    // blocked the whole daemon.
    const args = workerProcessArguments("socket-helper", null);
    const helper = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "ignore", "ipc", 1], env: {} });
    const timer = setTimeout(() => {
      helper.kill("SIGKILL");
      reject(new Error(`the helper process did not answer within ${helperTimeoutMs()} ms`));
    }, helperTimeoutMs());
    helper.once("message", (_message, handle) => {
      clearTimeout(timer);
      if (handle instanceof Socket) resolve(handle);
      else reject(new Error("the helper process sent no socket"));
    });
    helper.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    helper.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the helper process exited with code ${code}`));
    });
  });
}

/** fd 1 → stderr when stderr can be reopened, else /dev/null. Nothing else may open a file meanwhile. */
function pointFd1Away(): Fd1Target {
  const stderr = stat(2);
  // A closed stdin would take the number fd 1 must get back.
  if (stat(0) === undefined) openSync("/dev/null", constants.O_RDONLY);
  const canReopenStderr = stderr !== undefined && !stderr.isSocket();
  const target = canReopenStderr ? "/proc/self/fd/2" : "/dev/null";
  const flags = constants.O_WRONLY | (stderr?.isFile() === true ? constants.O_APPEND : 0);
  closeSync(1);
  let fd: number;
  try {
    fd = openSync(target, flags);
  } catch {
    fd = openSync("/dev/null", constants.O_WRONLY);
  }
  if (fd !== 1) {
    // Another thread opened a file between the close and the open and took number 1 (a socket's
    // fd 1 is pointed away once the daemon runs: its workers load modules meanwhile). Ours goes;
    // fd 1 is that file's now, so it counts as not guarded (plugins run in child processes).
    closeSync(fd);
    throw new Error(`fd 1 could not be reopened: another file took its number (got ${fd})`);
  }
  return canReopenStderr ? "stderr" : "/dev/null";
}

function logClaimed(fd1: Fd1Target): Fd1Target {
  log("debug", `protocol on its own descriptor; file descriptor 1 now goes to ${fd1}`);
  return fd1;
}

/** Why the protocol is still on fd 1, once moving it failed. */
let stayedBecause: string | undefined;

function stayOnFd1(error: unknown): Fd1Target {
  stayedBecause = (error as Error).message;
  log("warn", `the protocol stays on file descriptor 1: ${stayedBecause}; plugins will run in child processes, not in the daemon`);
  return "unchanged";
}

/** The protocol has its own descriptor but fd 1 could not be pointed away: treated as fd 1 unmoved. */
function unguarded(error: unknown): Fd1Target {
  stayedBecause = (error as Error).message;
  log("warn", `the protocol has its own descriptor, but ${stayedBecause}; plugins will run in child processes, not in the daemon`);
  return "unchanged";
}

interface Claim {
  stream: Writable;
  /** Starts guarding fd 1 if it has not started; resolves with where fd 1 points then. */
  guard(): Promise<Fd1Target>;
}

/** A pipe, terminal or file: reopened through /proc at once. */
function claimReopenable(fd1: BigIntStats): Claim {
  let stream: Writable;
  try {
    const fd = openSync("/proc/self/fd/1", constants.O_WRONLY | (fd1.isFile() ? constants.O_APPEND : 0));
    stream = fd1.isFIFO() ? new Socket({ fd, readable: false, writable: true }) : createWriteStream("", { fd });
  } catch (error) {
    const fd1Now = stayOnFd1(error);
    return { stream: process.stdout, guard: () => Promise.resolve(fd1Now) };
  }
  const guarded = Promise.resolve(logClaimed(pointFd1Away()));
  return { stream, guard: () => guarded };
}

/** A socket: fd 1 itself until the helper's copy arrives (`guard`). */
function claimSocket(): Claim {
  const direct = new Socket({ fd: 1, readable: false, writable: true });
  const stream = new SwitchingStream(direct);
  let guarded: Promise<Fd1Target> | undefined;
  const guard = (): Promise<Fd1Target> =>
    (guarded ??= receiveSocketCopy()
      .then(async (copy) => {
        copy.pause(); // nothing is ever read from it
        let fd1: Fd1Target = "unchanged";
        let failed: unknown;
        await stream.switchBetweenWrites(() => {
          // Everything written so far has been handed to the OS: fd 1's handle can go (libuv
          // leaves descriptors 0-2 open when it closes their handles), then fd 1 is pointed away.
          // The protocol goes on on the copy whether or not that succeeds.
          direct.destroy();
          try {
            fd1 = pointFd1Away();
          } catch (error) {
            failed = error;
          }
          return copy;
        });
        return failed === undefined ? logClaimed(fd1) : unguarded(failed);
      })
      // Never rejects: what waits for it (the plugin host) runs either way, as without /proc.
      .catch((error: unknown) => stayOnFd1(error)));
  return { stream, guard };
}

let claimed: Claim | undefined;

/**
 * Call before anything else opens a file or touches `process.stdout`. Where this cannot be done
 * (no /proc, no helper), the protocol stays on fd 1 and a warning says so.
 */
export function claimProtocolOutput(): void {
  const fd1 = stat(1);
  if (fd1 === undefined) return;
  const claim = fd1.isSocket() ? claimSocket() : claimReopenable(fd1);
  claimed = claim;
  registerFd1Guard(async () => {
    const fd1Now = await claim.guard();
    return fd1Now === "unchanged" ? { reachesClient: true, why: stayedBecause ?? "it could not be moved" } : { reachesClient: false };
  });
}

/** The protocol's stream: the claimed one, else stdout (tests and embedders calling `serve` directly). */
export function protocolOutput(): Writable {
  return claimed?.stream ?? process.stdout;
}

/**
 * Resolves once bytes written to fd 1 no longer reach the client; starts what that takes if it has
 * not started. Code the daemon did not write (the plugin host) waits for it (fd1-guard.ts).
 * At once when no protocol output was claimed (the CLI's commands, `serve --socket`).
 */
export function guardFd1(): Promise<Fd1Target> {
  return claimed?.guard() ?? Promise.resolve("unchanged");
}
