/**
 * `doctor` tries each plugin's hooks on a tiny sample session, as a compaction and a tree
 * navigation would call them: a plugin that loads fine but throws, crashes, hangs or answers
 * nonsense when asked shows up here, with where it failed, instead of as "active".
 */
import type { CompactHookEvent, PluginError, SessionEntry, Settings, TreeHookEvent } from "@base-context/protocol";
import type { PluginHost } from "../plugins/index.js";

/** A trial must not keep doctor waiting for a hook's full timeout. */
export const TRIAL_TIMEOUT_MS = 5_000;

const at = "2026-01-01T00:00:00.000Z";
const say = (id: string, parentId: string | null, role: "user" | "assistant", text: string): SessionEntry =>
  (role === "user"
    ? { type: "message", id, parentId, timestamp: at, message: { role, content: text, timestamp: 1 } }
    : { type: "message", id, parentId, timestamp: at, message: { role, content: [{ type: "text", text }], timestamp: 2 } }) as SessionEntry;

function sampleEntries(): SessionEntry[] {
  return [
    say("d0c70001", null, "user", "Add a health check endpoint."),
    say("d0c70002", "d0c70001", "assistant", "Added GET /health returning 200."),
    say("d0c70003", "d0c70002", "user", "Now log each request."),
    say("d0c70004", "d0c70003", "assistant", "Added a request logger."),
  ];
}

function compactEvent(): CompactHookEvent {
  const entries = sampleEntries();
  const messages = entries.slice(0, 2).map((entry) => (entry.type === "message" ? entry.message : undefined)!);
  return {
    preparation: {
      leafId: "d0c70004",
      firstKeptEntryId: "d0c70003",
      messagesToSummarize: messages,
      summarizeEntryIds: ["d0c70001", "d0c70002"],
      turnPrefixMessages: [],
      turnPrefixEntryIds: [],
      isSplitTurn: false,
      tokensBefore: 60,
      fileOps: { readFiles: [], modifiedFiles: [] },
      settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
    },
    branchEntries: entries,
  };
}

function treeEvent(): TreeHookEvent {
  return {
    preparation: {
      targetId: "d0c70002",
      oldLeafId: "d0c70004",
      commonAncestorId: "d0c70002",
      entriesToSummarize: sampleEntries().slice(2),
      userWantsSummary: true,
    },
  };
}

/** The failures of every plugin asked both hooks on the sample session (nothing is written anywhere). */
export async function trialRunPlugins(host: PluginHost, settings: Settings, projectDir: string | undefined): Promise<PluginError[]> {
  const trialSettings: Settings = {
    ...settings,
    plugins: { ...settings.plugins, hookTimeoutMs: Math.min(settings.plugins.hookTimeoutMs, TRIAL_TIMEOUT_MS) },
  };
  const options = { settings: trialSettings, ...(projectDir !== undefined ? { projectDir } : {}) };
  const compact = await host.runCompactHook(compactEvent(), options);
  const tree = await host.runTreeHook(treeEvent(), options);
  return [...compact.errors, ...tree.errors];
}
