/**
 * Runs inside a plugin's worker thread: waits for "activate" (so a thread can be started before
 * it is needed), loads the plugin module, checks its shape, then serves hook calls from the host.
 * `ctx.countTokens` / `ctx.complete` are requests back to the host, which owns the tokenizer, the
 * model and its key. Run by the daemon's one worker entry (workers/start-worker.ts), it first
 * registers the loader hooks the plugin is loaded through (loader-hooks.ts, scripts.ts).
 */
import type { HookName, PluginContext, PluginDefinition, PluginLogLevel } from "@base-context/protocol";
import { register } from "node:module";
import { Socket } from "node:net";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { toWireError, type HostToWorker, type ServiceMethod, type WorkerBoot, type WorkerToHost } from "../wire.js";
import type { WorkerScripts } from "./scripts.js";

/** How the bootstrap talks to the host: the worker's parent port, or file descriptor 3 of a plugin process. */
interface HostPort {
  postMessage(message: string): void;
  on(event: "message", listener: (raw: string) => void): void;
}

/**
 * In a plugin process (child-process.ts): one JSON text per line on fd 3, both ways. When the
 * daemon goes away the socket closes, and so does this process. Signals go to this process only:
 * `process.kill` is narrowed to its own pid (the permission model does not cover signals; a plugin
 * determined to signal another process can still reach the raw binding — see docs/plugins.md).
 */
function processPort(): HostPort {
  const socket = new Socket({ fd: 3, readable: true, writable: true });
  socket.setEncoding("utf8");
  const listeners: ((raw: string) => void)[] = [];
  let buffer = "";
  socket.on("data", (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      for (const listener of listeners) listener(line);
      newline = buffer.indexOf("\n");
    }
  });
  const leave = (): never => process.exit(0);
  socket.on("end", leave);
  socket.on("close", leave);
  socket.on("error", leave);
  const kill = process.kill.bind(process);
  process.kill = (pid: number, signal?: string | number) => {
    if (pid !== process.pid) throw Object.assign(new Error("a plugin process may only signal itself"), { code: "ERR_ACCESS_DENIED" });
    return kill(pid, signal);
  };
  return {
    postMessage: (message) => void socket.write(`${message}\n`),
    on: (_event, listener) => void listeners.push(listener),
  };
}

/**
 * In a worker thread `process.kill(process.pid)` would signal the whole daemon: a plugin's
 * careless clean-up must not end every client's session. Refused here (a fault contained; a
 * plugin set on harm has other ways, which is why "process" isolation exists).
 */
function containSignals(): void {
  const kill = process.kill.bind(process);
  process.kill = (pid: number, signal?: string | number) => {
    if ((pid === process.pid || pid === 0 || pid === -process.pid) && signal !== 0) {
      throw Object.assign(new Error("a plugin may not signal the daemon's process"), { code: "ERR_ACCESS_DENIED" });
    }
    return kill(pid, signal);
  };
}

/**
 * The hooks that load the plugin, registered before anything of it loads: a thread asks the
 * daemon's transpiler for TypeScript (its port comes in `workerData`); a process, which has no
 * daemon thread to ask, strips types itself with the daemon's sucrase. A process gets the
 * scripts as its second argument (after the worker's kind).
 */
function registerLoaderHooks(): void {
  if (parentPort !== null) {
    const { scripts, transpiler } = workerData as { scripts: WorkerScripts; transpiler: MessagePort };
    register(scripts.hooksUrl, { data: { ...scripts.loaderData, transpiler }, transferList: [transpiler] });
  } else {
    const scripts = JSON.parse(process.argv[3]!) as WorkerScripts;
    register(scripts.hooksUrl, { data: { ...scripts.loaderData, sucraseFrom: scripts.sucraseFrom } });
  }
}

registerLoaderHooks();
const port: HostPort = parentPort ?? processPort();
if (parentPort !== null) containSignals();
/** Set by "activate"; every other message comes after it. */
let boot: WorkerBoot;

function send(message: WorkerToHost): void {
  port.postMessage(JSON.stringify(message));
}

type HookFunction = (event: unknown, ctx: PluginContext) => unknown;

/** Throws a message an author can act on when the module's default export is not a plugin. */
function pluginFromModule(module: Record<string, unknown>): Map<HookName, HookFunction> {
  const candidate = module["default"] as Partial<PluginDefinition> | undefined;
  if (typeof candidate !== "object" || candidate === null) {
    throw new Error("the entry module has no default export; export default definePlugin({ name, apiVersion, hooks })");
  }
  if (typeof candidate.apiVersion !== "number" || !boot.supportedApiVersions.includes(candidate.apiVersion)) {
    throw new Error(
      `the plugin declares apiVersion ${String(candidate.apiVersion)}; this daemon supports ${boot.supportedApiVersions.join(", ")}`,
    );
  }
  const hooks = candidate.hooks as Record<string, unknown> | undefined;
  if (typeof hooks !== "object" || hooks === null) throw new Error("the plugin has no `hooks` object");
  const found = new Map<HookName, HookFunction>();
  for (const [name, hook] of Object.entries(hooks)) {
    if (hook === undefined) continue;
    if (!(boot.hookNames as readonly string[]).includes(name)) {
      throw new Error(`unknown hook "${name}" (known hooks: ${boot.hookNames.join(", ")})`);
    }
    if (typeof hook !== "function") throw new Error(`hook "${name}" is not a function`);
    found.set(name as HookName, hook as HookFunction);
  }
  return found;
}

let hooks = new Map<HookName, HookFunction>();
const running = new Map<number, AbortController>();
const pendingRequests = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
let nextRequestId = 1;

/** UTF-8 length of a JSON text (Buffer exists in workers and in child processes alike). */
const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");

/** Failures to allocate memory that leave the thread alive (typed arrays, Buffers, strings). */
function isAllocationFailure(error: unknown): boolean {
  return (
    error instanceof RangeError && /allocation failed|Invalid (?:string|typed array|array buffer) length|out of memory/i.test(error.message)
  );
}

function requestHost(callId: number, maxBytes: number, method: ServiceMethod, params: unknown, signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.reject(signal.reason);
  const requestId = nextRequestId++;
  const encoded = JSON.stringify({ t: "request", requestId, callId, method, params } satisfies WorkerToHost);
  const bytes = byteLength(encoded);
  if (bytes > maxBytes) {
    return Promise.reject(new RangeError(`ctx.${method}: the request is ${bytes} bytes, over plugins.maxMessageBytes (${maxBytes} bytes)`));
  }
  return new Promise((resolve, reject) => {
    pendingRequests.set(requestId, { resolve, reject });
    port.postMessage(encoded);
  });
}

function contextFor(callId: number, maxBytes: number, signal: AbortSignal, settings: unknown): PluginContext {
  return {
    signal,
    settings: settings as PluginContext["settings"],
    plugin: { name: boot.name, version: boot.version, dir: boot.dir },
    log: (level: PluginLogLevel, message: string) => send({ t: "log", level, message: String(message) }),
    countTokens: async (text) => (await requestHost(callId, maxBytes, "countTokens", { text }, signal)) as number,
    complete: async (request) =>
      (await requestHost(callId, maxBytes, "complete", request, signal)) as Awaited<ReturnType<PluginContext["complete"]>>,
  };
}

async function runCall(callId: number, hook: HookName, maxBytes: number, event: unknown, settings: unknown): Promise<void> {
  const controller = new AbortController();
  running.set(callId, controller);
  try {
    const fn = hooks.get(hook);
    const value = fn === undefined ? undefined : await fn(event, contextFor(callId, maxBytes, controller.signal, settings));
    let encoded: string;
    try {
      encoded = JSON.stringify({ t: "return", callId, value: value ?? null } satisfies WorkerToHost);
    } catch (error) {
      // Longer than a string can be: too large by any limit.
      if (isAllocationFailure(error)) send({ t: "too-large", callId, bytes: null, maxBytes });
      else send({ t: "unserializable", callId, message: `the result is not plain JSON: ${(error as Error).message}` });
      return;
    }
    // Measured here, on the plugin's side: an over-size result never reaches the daemon.
    const bytes = byteLength(encoded);
    if (bytes > maxBytes) {
      send({ t: "too-large", callId, bytes, maxBytes });
      return;
    }
    port.postMessage(encoded);
  } catch (error) {
    if (isAllocationFailure(error)) send({ t: "out-of-memory", callId, message: `${(error as Error).name}: ${(error as Error).message}` });
    else send({ t: "throw", callId, error: toWireError(error) });
  } finally {
    running.delete(callId);
  }
}

function abortReason(name: string, message: string): Error {
  // DOMException is what AbortSignal.abort()/timeout() use, so `err.name === "AbortError"` checks work.
  return new DOMException(message, name === "TimeoutError" ? "TimeoutError" : "AbortError");
}

async function activate(received: WorkerBoot): Promise<void> {
  boot = received;
  try {
    hooks = pluginFromModule((await import(boot.entryUrl)) as Record<string, unknown>);
    send({ t: "ready", hooks: [...hooks.keys()] });
  } catch (error) {
    send({ t: "activation-failed", error: toWireError(error) });
  }
}

port.on("message", (raw: string) => {
  const message = JSON.parse(raw) as HostToWorker;
  switch (message.t) {
    case "activate":
      void activate(message.boot);
      break;
    case "call":
      void runCall(message.callId, message.hook, message.maxBytes, message.event, message.settings);
      break;
    case "abort":
      running.get(message.callId)?.abort(abortReason(message.reason.name, message.reason.message));
      break;
    case "reply": {
      const pending = pendingRequests.get(message.requestId);
      if (pending === undefined) break;
      pendingRequests.delete(message.requestId);
      if (message.error !== undefined) {
        const error = new Error(message.error.message);
        error.name = message.error.name;
        pending.reject(error);
      } else {
        pending.resolve(message.value);
      }
      break;
    }
  }
});
