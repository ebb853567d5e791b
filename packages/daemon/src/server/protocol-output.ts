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
 */
import { spawn } from "node:child_process";
import { closeSync, constants, createWriteStream, fstatSync, openSync, type BigIntStats } from "node:fs";
import { Socket } from "node:net";
import type { Writable } from "node:stream";
import { log } from "../log.js";

export interface ProtocolOutput {
  stream: Writable;
  /** Where fd 1 points now (for the log and the tests). */
  fd1: "stderr" | "/dev/null" | "unchanged";
}

const HELPER_TIMEOUT_MS = 10_000;
/** Sends its inherited fd 1 back to its parent; the parent receives a new descriptor to the same socket. */
const SOCKET_HELPER = `const { Socket } = require("node:net");
process.send("fd1", new Socket({ fd: 1, readable: false, writable: true }), () => process.disconnect());`;

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

function receiveSocketCopy(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const helper = spawn(process.execPath, ["-e", SOCKET_HELPER], { stdio: ["ignore", "inherit", "ignore", "ipc"], env: {} });
    const timer = setTimeout(() => {
      helper.kill("SIGKILL");
      reject(new Error("the helper process did not answer"));
    }, HELPER_TIMEOUT_MS);
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

/** A second descriptor to what fd 1 is, as a writable stream. */
async function protocolStream(fd1: BigIntStats): Promise<Writable> {
  if (fd1.isSocket()) {
    const socket = await receiveSocketCopy();
    socket.pause(); // nothing is ever read from it
    return socket;
  }
  const flags = constants.O_WRONLY | (fd1.isFile() ? constants.O_APPEND : 0);
  const fd = openSync("/proc/self/fd/1", flags);
  if (fd1.isFIFO()) return new Socket({ fd, readable: false, writable: true });
  return createWriteStream("", { fd });
}

/** fd 1 → stderr when stderr can be reopened, else /dev/null. Nothing else may open a file meanwhile. */
function pointFd1Away(): ProtocolOutput["fd1"] {
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
  if (fd !== 1) throw new Error(`fd 1 could not be reopened (got ${fd})`);
  return canReopenStderr ? "stderr" : "/dev/null";
}

/**
 * Call before anything else opens a file or touches `process.stdout`. Where this cannot be done
 * (no /proc), the protocol stays on fd 1 and a warning says so.
 */
export async function claimProtocolOutput(): Promise<ProtocolOutput> {
  const fd1 = stat(1);
  if (fd1 === undefined) return { stream: process.stdout, fd1: "unchanged" };
  let stream: Writable;
  try {
    stream = await protocolStream(fd1);
  } catch (error) {
    log("warn", `the protocol stays on file descriptor 1, which plugins can also write to: ${(error as Error).message}`);
    return { stream: process.stdout, fd1: "unchanged" };
  }
  const fd1Now = pointFd1Away();
  log("debug", `protocol on its own descriptor; file descriptor 1 now goes to ${fd1Now}`);
  return { stream, fd1: fd1Now };
}

let claimed: ProtocolOutput | undefined;

/** Records the output `serve` writes the protocol to (set by main before the command runs). */
export function useProtocolOutput(output: ProtocolOutput): void {
  claimed = output;
}

/** The protocol's stream: the claimed one, else stdout (tests and embedders calling `serve` directly). */
export function protocolOutput(): Writable {
  return claimed?.stream ?? process.stdout;
}
