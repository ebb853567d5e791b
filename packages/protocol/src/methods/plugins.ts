/**
 * The plugin contract (docs/design.md#plugins, docs/plugins.md): hook events and results, what a plugin's `ctx` offers,
 * the rules a hook result must follow, and the `plugins/*` methods and notifications.
 * The daemon's plugin host and the plugin SDK's test harness both validate with what is here,
 * so a plugin that passes its unit tests is judged by the same rules inside the daemon.
 */
import { z } from "zod";
import { MAX_PATH_BYTES, PathString } from "../limits.js";
import { notification, request } from "../declare.js";
import { SessionEntry } from "../entries.js";
import { CompactionPreparation } from "./compaction.js";
import type { Settings } from "./settings.js";

// Object and union schemas are `z.lazy`: built on first use, not when this module loads (see
// ../entries.ts, docs/architecture.md#start-path-and-bundles).

// ---- versions and hook names -------------------------------------------------------------------

/** The plugin API this protocol describes; a plugin's `apiVersion` must be one of the supported ones. */
export const PLUGIN_API_VERSION = 1;
export const SUPPORTED_PLUGIN_API_VERSIONS: readonly number[] = [PLUGIN_API_VERSION];

export const HOOK_NAMES = ["session_before_compact", "session_before_tree"] as const;
export const HookName = z.enum(HOOK_NAMES);
export type HookName = z.infer<typeof HookName>;

// ---- events ------------------------------------------------------------------------------------

export const CompactHookEvent = z.lazy(() =>
  z.object({
    preparation: CompactionPreparation,
    /** Every entry on the current branch, root → leaf: where a plugin finds its own earlier state. */
    branchEntries: z.array(SessionEntry),
    /**
     * How many entries of the branch were left out of `branchEntries` so the event fits in
     * `plugins.maxMessageBytes`: the oldest conversation messages first, then the oldest other
     * entries. Absent when the whole branch is there.
     */
    branchEntriesOmitted: z.number().int().positive().optional(),
    customInstructions: z.string().optional(),
  }),
);
export type CompactHookEvent = z.infer<typeof CompactHookEvent>;
/** The same event as a test may write it (fields with defaults may be left out). */
export type CompactHookEventInput = z.input<typeof CompactHookEvent>;

export const TreeHookPreparation = z.lazy(() =>
  z.object({
    targetId: z.string(),
    oldLeafId: z.string().nullable(),
    commonAncestorId: z.string().nullable(),
    /** The entries being left, oldest first (compactions included). */
    entriesToSummarize: z.array(SessionEntry),
    /** A summary result is only used when the user asked for a summary. */
    userWantsSummary: z.boolean(),
    customInstructions: z.string().optional(),
    replaceInstructions: z.boolean().optional(),
    label: z.string().optional(),
  }),
);
export type TreeHookPreparation = z.infer<typeof TreeHookPreparation>;

export const TreeHookEvent = z.lazy(() => z.object({ preparation: TreeHookPreparation }));
export type TreeHookEvent = z.infer<typeof TreeHookEvent>;
export type TreeHookEventInput = z.input<typeof TreeHookEvent>;

// ---- results -----------------------------------------------------------------------------------

/** What a plugin hands back instead of the daemon's compaction summary. */
export const HookCompaction = z.lazy(() =>
  z
    .object({
      summary: z.string().min(1, "summary must not be empty"),
      firstKeptEntryId: z.string().min(1),
      tokensBefore: z.number().nonnegative().nullable(),
      /** Any JSON; stored on the compaction entry as returned. */
      details: z.unknown().optional(),
    })
    .strict(),
);
export type HookCompaction = z.infer<typeof HookCompaction>;

/** What a plugin hands back instead of the daemon's branch summary. */
export const HookBranchSummary = z.lazy(() =>
  z
    .object({ summary: z.string().min(1, "summary must not be empty"), details: z.unknown().optional() })
    .strict(),
);
export type HookBranchSummary = z.infer<typeof HookBranchSummary>;

// `.strict()`: a misspelt key (`{ sumary: … }`) is reported instead of silently meaning "nothing".
export const CompactHookResult = z.lazy(() =>
  z
    .object({ cancel: z.boolean().optional(), compaction: HookCompaction.optional() })
    .strict()
    .nullish(),
);
export type CompactHookResult = z.input<typeof CompactHookResult>;

export const TreeHookResult = z.lazy(() =>
  z
    .object({ cancel: z.boolean().optional(), summary: HookBranchSummary.optional() })
    .strict()
    .nullish(),
);
export type TreeHookResult = z.input<typeof TreeHookResult>;

export interface HookTypes {
  session_before_compact: { event: CompactHookEvent; result: CompactHookResult; value: HookCompaction };
  session_before_tree: { event: TreeHookEvent; result: TreeHookResult; value: HookBranchSummary };
}

/** A hook result after validation: what the caller acts on. */
export type HookVerdict<V> = { kind: "none" } | { kind: "cancel" } | { kind: "result"; value: V };
export type HookCheck<V> = { ok: true; verdict: HookVerdict<V> } | { ok: false; message: string };

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

/**
 * Entries a plugin may name as `firstKeptEntryId`: the summarized and turn-prefix entries, the
 * prepared `firstKeptEntryId` and the entries kept after it. `keptEntryIds` comes from the
 * caller; without it the kept entries are read from `branchEntries` (everything after the
 * prepared first kept entry).
 */
export function allowedFirstKeptEntryIds(event: CompactHookEvent, keptEntryIds?: Iterable<string>): Set<string> {
  const { preparation } = event;
  const allowed = new Set([...preparation.summarizeEntryIds, ...preparation.turnPrefixEntryIds, preparation.firstKeptEntryId]);
  if (keptEntryIds !== undefined) {
    for (const id of keptEntryIds) allowed.add(id);
  } else {
    const start = event.branchEntries.findIndex((entry) => entry.id === preparation.firstKeptEntryId);
    if (start >= 0) for (const entry of event.branchEntries.slice(start)) allowed.add(entry.id);
  }
  return allowed;
}

/** Validates a `session_before_compact` result; `{ cancel: true }` wins over a compaction in the same result. */
export function checkCompactHookResult(raw: unknown, allowedIds: ReadonlySet<string>): HookCheck<HookCompaction> {
  const parsed = CompactHookResult.safeParse(raw);
  if (!parsed.success) return { ok: false, message: describeIssues(parsed.error) };
  const result = parsed.data;
  if (result?.cancel === true) return { ok: true, verdict: { kind: "cancel" } };
  if (result?.compaction === undefined) return { ok: true, verdict: { kind: "none" } };
  if (!allowedIds.has(result.compaction.firstKeptEntryId)) {
    return {
      ok: false,
      message: `compaction.firstKeptEntryId "${result.compaction.firstKeptEntryId}" is not an entry of the prepared range`,
    };
  }
  return { ok: true, verdict: { kind: "result", value: result.compaction } };
}

export function checkTreeHookResult(raw: unknown): HookCheck<HookBranchSummary> {
  const parsed = TreeHookResult.safeParse(raw);
  if (!parsed.success) return { ok: false, message: describeIssues(parsed.error) };
  const result = parsed.data;
  if (result?.cancel === true) return { ok: true, verdict: { kind: "cancel" } };
  if (result?.summary === undefined) return { ok: true, verdict: { kind: "none" } };
  return { ok: true, verdict: { kind: "result", value: result.summary } };
}

// ---- what `ctx` offers a plugin ----------------------------------------------------------------

export const PluginLogLevel = z.enum(["error", "warn", "info", "debug"]);
export type PluginLogLevel = z.infer<typeof PluginLogLevel>;

export const PluginCompleteMessage = z.lazy(() =>
  z.object({ role: z.enum(["user", "assistant"]), content: z.string() }),
);

/** A model call through the daemon: its model, its key (which never enters a plugin's worker). */
export const PluginCompleteRequest = z.lazy(() =>
  z
    .object({
      system: z.string().optional(),
      prompt: z.string().optional(),
      messages: z.array(PluginCompleteMessage).min(1).optional(),
      maxTokens: z.number().int().positive(),
    })
    .refine((request) => (request.prompt === undefined) !== (request.messages === undefined), {
      message: "give exactly one of prompt or messages",
    }),
);
export type PluginCompleteRequest = z.infer<typeof PluginCompleteRequest>;

export const PluginCompleteResult = z.lazy(() =>
  z.object({
    text: z.string(),
    model: z.string().optional(),
    usage: z.object({ input: z.number().optional(), output: z.number().optional() }).optional(),
  }),
);
export type PluginCompleteResult = z.infer<typeof PluginCompleteResult>;

export interface PluginContext {
  /** Aborted when the daemon cancels the request or the hook runs out of time: pass it to I/O. */
  readonly signal: AbortSignal;
  /** A line in the daemon's log (stderr), prefixed with the plugin's name. */
  log(level: PluginLogLevel, message: string): void;
  /** Tokens of `text` by the daemon's tokenizer. */
  countTokens(text: string): Promise<number>;
  /** One completion from the daemon's configured model. */
  complete(request: PluginCompleteRequest): Promise<PluginCompleteResult>;
  /** The daemon's merged settings for this session, as plain JSON (a snapshot, safe to keep). */
  readonly settings: Settings;
  /** Which plugin this is (handy in logs and in `details`). */
  readonly plugin: { readonly name: string; readonly version: string; readonly dir: string };
}

type MaybePromise<T> = T | Promise<T>;

export interface PluginHooks {
  session_before_compact?(event: CompactHookEvent, ctx: PluginContext): MaybePromise<CompactHookResult | void>;
  session_before_tree?(event: TreeHookEvent, ctx: PluginContext): MaybePromise<TreeHookResult | void>;
}

/** A plugin module's default export. */
export interface PluginDefinition {
  name: string;
  apiVersion: number;
  hooks: PluginHooks;
}

// ---- methods and notifications -----------------------------------------------------------------

export const PluginSource = z.enum(["global", "project"]);
export const PluginStatus = z.enum(["active", "error", "disabled", "untrusted"]);
/** `too-large`: a message across the plugin's boundary (its result, a request, the hook's event) was over `plugins.maxMessageBytes`. */
export const PluginErrorKind = z.enum(["timeout", "crash", "oom", "invalid-result", "exception", "activation", "too-large"]);
export type PluginSource = z.infer<typeof PluginSource>;
export type PluginStatus = z.infer<typeof PluginStatus>;
export type PluginErrorKind = z.infer<typeof PluginErrorKind>;

export const PluginLastError = z.lazy(() =>
  z.object({
    kind: PluginErrorKind,
    message: z.string(),
    hook: HookName.nullable(),
    /** ISO-8601. */
    at: z.string(),
  }),
);
export type PluginLastError = z.infer<typeof PluginLastError>;

export const PluginInfo = z.lazy(() =>
  z.object({
    /** Stable across reloads: `global:<name>` or `project:<name>@<projectDir>`. */
    id: z.string(),
    /** The plugin's folder name. */
    name: z.string(),
    /** `version` from the plugin's package.json ("0.0.0" when it has none). */
    version: z.string(),
    /** Counts the loads of this plugin: each hot reload serves a new generation in a fresh worker. */
    generation: z.number().int().nonnegative(),
    source: PluginSource,
    projectDir: z.string().optional(),
    /** The plugin's folder. */
    path: z.string(),
    status: PluginStatus,
    /** Hooks the serving version implements. */
    hooks: z.array(HookName),
    /** ISO-8601 time the serving version activated. */
    loadedAt: z.string().optional(),
    lastError: PluginLastError.optional(),
    /**
     * Whether the plugin may run: a global plugin always (the user installed it), a project's once
     * the user trusted the project (`project/trust`). A trusted plugin runs as the user
     * (docs/plugins.md#what-a-trusted-plugin-can-do).
     */
    trusted: z.boolean(),
    /** Where its code runs: a worker thread of the daemon, or a child process of its own (`plugins.isolation`). */
    isolation: z.enum(["worker", "process"]),
  }),
);
export type PluginInfo = z.infer<typeof PluginInfo>;

export const PluginsList = request(
  "plugins/list",
  () => z.object({ projectDir: PathString().optional() }),
  () => z.object({ plugins: z.array(PluginInfo) }),
);

/** Reloads one plugin from its files (and re-enables it if crashes disabled it), or rescans all. */
export const PluginsReload = request(
  "plugins/reload",
  () => z.object({ id: z.string().max(MAX_PATH_BYTES + 100).optional() }),
  () => z.object({ plugins: z.array(PluginInfo) }),
);

/** Trust is kept in the global folder, never in the project: a cloned repository cannot trust itself. */
export const ProjectTrust = request(
  "project/trust",
  () => z.object({ projectDir: PathString().min(1), trusted: z.boolean() }),
  () => z.object({}),
);

export const PluginsDidChange = notification("plugins/didChange", () => z.object({ plugins: z.array(PluginInfo) }));

export const PluginError = z.lazy(() =>
  z.object({
    pluginId: z.string(),
    version: z.string(),
    generation: z.number().int().nonnegative(),
    /** The hook that was running; null when the failure happened outside a hook (loading, idle crash). */
    hook: HookName.nullable(),
    kind: PluginErrorKind,
    message: z.string(),
  }),
);
export type PluginError = z.infer<typeof PluginError>;

export const PluginsDidError = notification("plugins/didError", () => PluginError);
