/**
 * The one place a hook runs across plugins: stable order, the first `{ cancel: true }` wins,
 * otherwise the last result wins; every failure (timeout, crash, out of memory, exception,
 * invalid result) is reported and skipped, so the daemon's default path continues.
 */
import {
  allowedFirstKeptEntryIds,
  checkCompactHookResult,
  checkTreeHookResult,
  CompactHookEvent,
  CompactHookResult,
  TreeHookEvent,
  TreeHookResult,
  type HookCheck,
  type HookName,
  type HookTypes,
  type PluginError,
  type Settings,
} from "@base-context/protocol";
import type { z } from "zod";
import { utf8ByteLength } from "@base-context/core";
import { CancelledError } from "../errors.js";
import type { ManagedPlugin, PluginRef } from "./managed-plugin.js";
import { tooLargeMessage } from "./worker-inbox.js";

/** Per-call facts a result check needs besides the event. */
export interface HookCheckContext {
  /** Ids a compaction result may name as `firstKeptEntryId`, beyond those of the preparation. */
  keptEntryIds?: Iterable<string>;
}

interface HookKind<H extends HookName> {
  event: z.ZodType<HookTypes[H]["event"]>;
  result: z.ZodType;
  /** Builds the result check for one run (work shared by all plugins is done once here). */
  checker(event: HookTypes[H]["event"], context: HookCheckContext): (raw: unknown) => HookCheck<HookTypes[H]["value"]>;
}

/** Every hook the daemon knows: its event schema, result schema and result check. */
const HOOK_KINDS: { [H in HookName]: HookKind<H> } = {
  session_before_compact: {
    event: CompactHookEvent,
    result: CompactHookResult,
    checker: (event, context) => {
      const allowed = allowedFirstKeptEntryIds(event, context.keptEntryIds);
      return (raw) => checkCompactHookResult(raw, allowed);
    },
  },
  session_before_tree: {
    event: TreeHookEvent,
    result: TreeHookResult,
    checker: () => checkTreeHookResult,
  },
};

/** What running a hook across plugins decided, and which plugin version decided it. */
export type HookRun<V> = (
  | { kind: "none" }
  | { kind: "cancel"; plugin: PluginRef }
  | { kind: "result"; value: V; plugin: PluginRef }
) & { errors: PluginError[] };

export interface RunHookInput<H extends HookName> {
  hook: H;
  event: HookTypes[H]["event"];
  /** Already ordered. */
  plugins: readonly ManagedPlugin[];
  settings: Settings;
  signal?: AbortSignal;
  context: HookCheckContext;
  /** Told when each plugin's call starts (its id) and ends (undefined). */
  onPluginCall?: (pluginId: string | undefined) => void;
  /** Validate the event against the hook's schema first (tests and debugging; costs time on big sessions). */
  checkEvent: boolean;
}

function cancelled(signal: AbortSignal): Error {
  return signal.reason instanceof CancelledError ? signal.reason : new CancelledError();
}

export async function runHook<H extends HookName>(input: RunHookInput<H>): Promise<HookRun<HookTypes[H]["value"]>> {
  const { hook, plugins, signal } = input;
  const kind = HOOK_KINDS[hook] as HookKind<H>;
  const errors: PluginError[] = [];
  if (!input.settings.plugins.enabled || plugins.length === 0) return { kind: "none", errors };
  if (input.checkEvent) kind.event.parse(input.event);

  const check = kind.checker(input.event, input.context);
  // Serialized once, whatever the number of plugins: sessions can be large.
  const eventJson = JSON.stringify(input.event);
  const settingsJson = JSON.stringify(input.settings);
  const { hookTimeoutMs: timeoutMs, maxMessageBytes } = input.settings.plugins;
  const { maxSummaryBytes } = input.settings.limits;
  // The call message carries both (plus a few bytes of framing): too big for any plugin to receive.
  const eventBytes = utf8ByteLength(eventJson) + utf8ByteLength(settingsJson);
  const eventTooLarge = eventBytes > maxMessageBytes ? tooLargeMessage(`the ${hook} event`, eventBytes, maxMessageBytes) : undefined;
  let last: { value: HookTypes[H]["value"]; plugin: PluginRef } | undefined;

  for (const plugin of plugins) {
    if (signal?.aborted) throw cancelled(signal);
    const worker = await plugin.worker();
    if (worker === undefined || !worker.hooks.has(hook)) continue;
    const version = { version: worker.boot.version, generation: worker.boot.generation };
    const ref: PluginRef = { id: plugin.id, name: plugin.name, ...version };
    const fail = (errorKind: PluginError["kind"], message: string): void => {
      errors.push({ pluginId: plugin.id, ...version, hook, kind: errorKind, message });
      plugin.fail(hook, errorKind, message, version);
    };

    if (eventTooLarge !== undefined) {
      fail("too-large", eventTooLarge);
      continue;
    }
    const limits = { timeoutMs, maxMessageBytes, ...(signal === undefined ? {} : { signal }) };
    input.onPluginCall?.(plugin.id);
    const outcome = await worker.call(hook, eventJson, settingsJson, limits).finally(() => input.onPluginCall?.(undefined));
    if (!outcome.ok) {
      if (outcome.kind === "cancelled") {
        if (signal?.aborted) throw cancelled(signal);
        continue; // its worker was stopped under the call (untrusted, removed, host disposed)
      }
      fail(outcome.kind, outcome.message);
      continue;
    }
    const checked = check(outcome.value);
    if (!checked.ok) {
      fail("invalid-result", checked.message);
      continue;
    }
    if (checked.verdict.kind === "result") {
      const summaryBytes = utf8ByteLength((checked.verdict.value as { summary: string }).summary);
      if (summaryBytes > maxSummaryBytes) {
        fail("invalid-result", `the summary is ${summaryBytes} bytes, over limits.maxSummaryBytes (${maxSummaryBytes} bytes)`);
        continue;
      }
    }
    if (checked.verdict.kind === "cancel") return { kind: "cancel", plugin: ref, errors };
    if (checked.verdict.kind === "result") last = { value: checked.verdict.value, plugin: ref };
  }
  return last === undefined ? { kind: "none", errors } : { kind: "result", ...last, errors };
}
