/** How a hook call ended, as the worker's answer to it says. */
import type { PluginErrorKind } from "@base-context/protocol";
import { describeWireError, stackLocation, type WireError, type WorkerToHost } from "./wire.js";
import { tooLargeMessage } from "./worker-inbox.js";

export type CallOutcome =
  | { ok: true; value: unknown }
  | { ok: false; kind: PluginErrorKind | "cancelled"; message: string };

/** The worker's messages that end a call. */
export type CallAnswer = Extract<WorkerToHost, { t: "return" | "throw" | "unserializable" | "too-large" | "out-of-memory" }>;

export function callOutcomeOf(answer: CallAnswer, pluginDir: string): CallOutcome {
  switch (answer.t) {
    case "return":
      return { ok: true, value: answer.value };
    case "throw":
      return { ok: false, kind: "exception", message: describeFailure(answer.error, pluginDir) };
    case "unserializable":
      return { ok: false, kind: "invalid-result", message: answer.message };
    case "too-large":
      return { ok: false, kind: "too-large", message: tooLargeMessage("the hook's result", answer.bytes ?? undefined, answer.maxBytes) };
    case "out-of-memory":
      return { ok: false, kind: "oom", message: `the plugin ran out of memory: ${answer.message}` };
  }
}

/** "message (at index.ts:12:11)": the error, and where in the plugin's files it was thrown when the stack says. */
export function describeFailure(error: WireError, pluginDir: string): string {
  const message = describeWireError(error);
  const location = stackLocation(error.stack, pluginDir);
  return location === undefined ? message : `${message} (at ${location})`;
}
