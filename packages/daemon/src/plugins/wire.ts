/**
 * Messages between the plugin host (daemon thread) and a plugin's worker. Every message crosses
 * as a JSON string, not a structured clone: what a plugin returns is plain JSON by construction
 * (a Map, a class instance or a function cannot sneak through and surprise the host later).
 * The envelope is the daemon's one for worker messages (../worker-messages.ts). This module is
 * loaded inside workers too, so it imports types only.
 */
import type { HookName, PluginLogLevel } from "@base-context/protocol";
import type { Reply, WireError } from "../worker-messages.js";

export type { WireError };

/** What a fresh worker needs to load one version of one plugin (sent with "activate"). */
export interface WorkerBoot {
  pluginId: string;
  name: string;
  version: string;
  generation: number;
  dir: string;
  entryUrl: string;
  supportedApiVersions: readonly number[];
  hookNames: readonly HookName[];
}

export type ServiceMethod = "complete" | "countTokens";

export type HostToWorker =
  | { t: "activate"; boot: WorkerBoot }
  /** `maxBytes`: `plugins.maxMessageBytes`, for the result and the requests of this call. */
  | { t: "call"; callId: number; hook: HookName; maxBytes: number; event: unknown; settings: unknown }
  | { t: "abort"; callId: number; reason: WireError }
  | Reply<unknown>;

export type WorkerToHost =
  | { t: "ready"; hooks: HookName[] }
  | { t: "activation-failed"; error: WireError }
  | { t: "return"; callId: number; value: unknown }
  | { t: "throw"; callId: number; error: WireError }
  /** The hook's result could not be turned into JSON (a BigInt, a cycle…). */
  | { t: "unserializable"; callId: number; message: string }
  /** The result was measured in the worker and is over the call's `maxBytes`: it is not sent. */
  | { t: "too-large"; callId: number; bytes: number | null; maxBytes: number }
  /** Building the result (or the hook itself) failed to allocate memory, and the worker lived. */
  | { t: "out-of-memory"; callId: number; message: string }
  | { t: "request"; requestId: number; callId: number; method: ServiceMethod; params: unknown }
  | { t: "log"; level: PluginLogLevel; message: string };

export function toWireError(error: unknown): WireError {
  if (error instanceof Error) {
    const wire: WireError = { name: error.name, message: error.message };
    if (error.stack !== undefined) wire.stack = error.stack;
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string") wire.code = code;
    return wire;
  }
  return { name: "Error", message: typeof error === "string" ? error : safeJson(error) };
}

/** `Name: message`, or just the message when the name adds nothing. */
export function describeWireError(wire: WireError): string {
  return wire.name && wire.name !== "Error" ? `${wire.name}: ${wire.message}` : wire.message;
}

/**
 * Where in the plugin's own files an error was thrown: the first stack frame under its folder,
 * as `file:line:column` relative to it (`index.ts:12:11`), or undefined when no frame is.
 */
export function stackLocation(stack: string | undefined, dir: string): string | undefined {
  if (stack === undefined) return undefined;
  const folder = dir.endsWith("/") ? dir : `${dir}/`;
  for (const line of stack.split("\n").slice(1)) {
    const match = /\(?((?:file:\/\/)?[^()\s]+):(\d+):(\d+)\)?\s*$/.exec(line.trim());
    if (!match) continue;
    let file = match[1]!;
    if (file.startsWith("file://")) {
      try {
        file = decodeURIComponent(new URL(file).pathname);
      } catch {
        continue;
      }
    }
    if (file.startsWith(folder)) return `${file.slice(folder.length)}:${match[2]}:${match[3]}`;
  }
  return undefined;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
