/**
 * Runs one of a plugin's hooks in-process, with the daemon's rules: the same event and result
 * schemas, the same `firstKeptEntryId` range check, the same JSON-only boundary, a timeout that
 * aborts `ctx.signal`. `ctx.complete` / `ctx.countTokens` are whatever the test passes in.
 */
import {
  allowedFirstKeptEntryIds,
  checkCompactHookResult,
  checkTreeHookResult,
  CompactHookEvent,
  HOOK_NAMES,
  PluginCompleteRequest,
  SUPPORTED_PLUGIN_API_VERSIONS,
  TreeHookEvent,
  type CompactHookEventInput,
  type HookCheck,
  type HookName,
  type HookTypes,
  type HookVerdict,
  type PluginCompleteResult,
  type PluginContext,
  type PluginDefinition,
  type PluginLogLevel,
  type Settings,
  type TreeHookEventInput,
} from "@base-context/protocol";
import { testSettings } from "./fixture.js";

export interface RunHookOptions {
  /** Stands in for the daemon's model. Without it, `ctx.complete` throws. */
  complete?(request: PluginCompleteRequest, signal: AbortSignal): PluginCompleteResult | Promise<PluginCompleteResult>;
  /** Stands in for the daemon's tokenizer (default: ceil(characters / 4)). */
  countTokens?(text: string): number | Promise<number>;
  /** `ctx.settings` (default: the daemon's defaults, see `testSettings`). */
  settings?: Settings;
  /** Abort it to test how the plugin reacts to a cancel. */
  signal?: AbortSignal;
  /** Default: `settings.plugins.hookTimeoutMs`. */
  timeoutMs?: number;
  /** Extra ids a compaction result may name as `firstKeptEntryId` (default: from `branchEntries`). */
  keptEntryIds?: Iterable<string>;
  /** Also receives every `ctx.log` line (they are collected in the result either way). */
  onLog?(line: HarnessLogLine): void;
  /** `ctx.plugin.dir` (default: the current directory). */
  pluginDir?: string;
}

export interface HarnessLogLine {
  level: PluginLogLevel;
  message: string;
}

/** What the daemon would make of the hook's answer, plus what the hook returned and logged. */
export type RunHookResult<V> = HookVerdict<V> & { raw: unknown; logs: HarnessLogLine[] };

/** The daemon would reject this: the kinds match `plugins/didError` (plus a broken test event). */
export class PluginHookError extends Error {
  constructor(
    readonly kind: "activation" | "invalid-event" | "invalid-result" | "timeout",
    message: string,
  ) {
    super(message);
    this.name = "PluginHookError";
  }
}

type HookEventInput<H extends HookName> = H extends "session_before_compact" ? CompactHookEventInput : TreeHookEventInput;

const EVENT_SCHEMAS: { session_before_compact: typeof CompactHookEvent; session_before_tree: typeof TreeHookEvent } = {
  session_before_compact: CompactHookEvent,
  session_before_tree: TreeHookEvent,
};

function checkPlugin(plugin: PluginDefinition): void {
  if (!SUPPORTED_PLUGIN_API_VERSIONS.includes(plugin.apiVersion)) {
    throw new PluginHookError(
      "activation",
      `the plugin declares apiVersion ${plugin.apiVersion}; supported: ${SUPPORTED_PLUGIN_API_VERSIONS.join(", ")}`,
    );
  }
  for (const name of Object.keys(plugin.hooks)) {
    if (!(HOOK_NAMES as readonly string[]).includes(name))
      throw new PluginHookError("activation", `unknown hook "${name}" (known hooks: ${HOOK_NAMES.join(", ")})`);
  }
}

/** A deep copy through JSON, as everything crossing the daemon's worker boundary is. */
function viaJson(value: unknown, what: string): unknown {
  try {
    const text = JSON.stringify(value ?? null);
    return JSON.parse(text);
  } catch (error) {
    throw new PluginHookError("invalid-result", `${what} is not plain JSON: ${(error as Error).message}`);
  }
}

export async function runHook<H extends HookName>(
  plugin: PluginDefinition,
  hook: H,
  event: HookEventInput<H>,
  options: RunHookOptions = {},
): Promise<RunHookResult<HookTypes[H]["value"]>> {
  checkPlugin(plugin);
  const parsedEvent = EVENT_SCHEMAS[hook].safeParse(event);
  if (!parsedEvent.success)
    throw new PluginHookError("invalid-event", `the test event is not a valid ${hook} event: ${parsedEvent.error.message}`);
  const settings = options.settings ?? testSettings();
  const timeoutMs = options.timeoutMs ?? settings.plugins.hookTimeoutMs;
  const logs: HarnessLogLine[] = [];

  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(new DOMException("the daemon cancelled the request", "AbortError"));
  if (options.signal?.aborted) onOuterAbort();
  options.signal?.addEventListener("abort", onOuterAbort, { once: true });

  const ctx: PluginContext = {
    signal: controller.signal,
    settings: viaJson(settings, "settings") as Settings,
    plugin: { name: plugin.name, version: "0.0.0-test", dir: options.pluginDir ?? process.cwd() },
    log: (level, message) => {
      const line = { level, message: String(message) };
      logs.push(line);
      options.onLog?.(line);
    },
    countTokens: async (text) => (options.countTokens ? options.countTokens(text) : Math.ceil(text.length / 4)),
    complete: async (request) => {
      const valid = PluginCompleteRequest.parse(request);
      if (options.complete === undefined) throw new Error("ctx.complete was called, but runHook got no `complete` option");
      if (controller.signal.aborted) throw controller.signal.reason;
      return options.complete(valid, controller.signal);
    },
  };

  const fn = plugin.hooks[hook] as ((event: unknown, ctx: PluginContext) => unknown) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let raw: unknown;
  try {
    const answer = Promise.resolve(fn?.(viaJson(parsedEvent.data, "the event"), ctx));
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const message = `the hook did not finish within ${timeoutMs} ms`;
        controller.abort(new DOMException(message, "TimeoutError"));
        reject(new PluginHookError("timeout", message));
      }, timeoutMs);
    });
    raw = await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onOuterAbort);
  }

  const result = viaJson(raw, "the result");
  const checked: HookCheck<HookTypes[H]["value"]> =
    hook === "session_before_compact"
      ? checkCompactHookResult(result, allowedFirstKeptEntryIds(parsedEvent.data as CompactHookEvent, options.keptEntryIds))
      : checkTreeHookResult(result);
  if (!checked.ok) throw new PluginHookError("invalid-result", checked.message);
  return { ...checked.verdict, raw: result, logs };
}
