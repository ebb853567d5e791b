/**
 * The daemon's services a plugin reaches from a hook (`ctx.complete`, `ctx.countTokens`): the
 * worker forwards the request, the host answers it here on behalf of the call that made it.
 */
import { PluginCompleteRequest, type HookName, type PluginCompleteResult } from "@base-context/protocol";
import type { AsyncResource } from "node:async_hooks";
import { z } from "zod";
import { utf8ByteLength } from "@base-context/core";
import { toWireError, type HostToWorker, type ServiceMethod } from "./wire.js";
import { isOver, tooLargeMessage } from "./worker-inbox.js";

/** Which plugin asks, for the daemon's services (attribution, per-plugin limits). */
export interface PluginCaller {
  pluginId: string;
  name: string;
  version: string;
  generation: number;
  hook: HookName;
}

/** The daemon's side of `ctx.complete` / `ctx.countTokens`. */
export interface PluginServices {
  complete(request: PluginCompleteRequest, signal: AbortSignal, caller: PluginCaller): Promise<PluginCompleteResult>;
  countTokens(text: string, caller: PluginCaller): number | Promise<number>;
}

/** The hook call a request is made in. */
export interface RequestingCall {
  caller: PluginCaller;
  /** Aborted when the call ends (timeout, cancel, the worker's death): a model call stops with it. */
  signal: AbortSignal;
  /**
   * The async context of whoever started the call: the request is served in it, so a model call
   * reaches the client whose request ran the hook.
   */
  scope: AsyncResource;
  /** `plugins.maxMessageBytes` for this call: a larger answer is refused. */
  maxBytes: number;
}

const CountTokensParams = z.object({ text: z.string() });

/** The reply to post to the worker (JSON): the service's answer, or the error it failed with. */
export async function serviceReply(
  services: PluginServices,
  request: { requestId: number; method: ServiceMethod; params: unknown },
  call: RequestingCall,
): Promise<string> {
  const { requestId, method, params } = request;
  try {
    const value =
      method === "countTokens"
        ? await services.countTokens(CountTokensParams.parse(params).text, call.caller)
        : await call.scope.runInAsyncScope(() => services.complete(PluginCompleteRequest.parse(params), call.signal, call.caller));
    const reply = JSON.stringify({ t: "reply", requestId, value } satisfies HostToWorker);
    if (!isOver(reply, call.maxBytes)) return reply;
    const message = tooLargeMessage(`the answer to ctx.${method}`, utf8ByteLength(reply), call.maxBytes);
    return JSON.stringify({ t: "reply", requestId, error: { name: "RangeError", message } } satisfies HostToWorker);
  } catch (error) {
    return JSON.stringify({ t: "reply", requestId, error: toWireError(error) } satisfies HostToWorker);
  }
}
