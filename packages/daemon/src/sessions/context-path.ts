/**
 * What the context builder reads: the path suffix that can appear in a context, with token
 * counts, and the latest settings entries on the whole path.
 */
import type {
  CompactionEntry,
  MessageEntry,
  ModelChangeEntry,
  SessionEntry,
  ThinkingLevelChangeEntry,
} from "@base-context/protocol";
import type { ContextPathRows, StoredEntry } from "../store/index.js";
import type { CountedEntry } from "./token-ledger.js";

export interface ContextPath {
  /** The leaf the path ends at (null: before the first entry, the path is empty). */
  leafId: string | null;
  /**
   * Root side first: from the latest compaction's firstKeptEntryId to the leaf (the compaction
   * entry included, where it lies on the path); from the root when the path has no compaction.
   * When the firstKeptEntryId is not on the path (possible in imported files), from the compaction.
   */
  entries: CountedEntry[];
  /** The latest compaction on the path. */
  compaction?: CompactionEntry;
  /** The latest model_change on the path (possibly before `entries`). */
  modelChange?: ModelChangeEntry;
  /**
   * The latest entry that set the model as pi reads it: a model_change or an assistant message
   * with provider and model. pi's context takes the model from this one.
   */
  modelEntry?: ModelChangeEntry | MessageEntry;
  /** The latest thinking_level_change on the path (pi's default level without one: "off"). */
  thinkingLevelChange?: ThinkingLevelChangeEntry;
}

export function toContextPath(rows: ContextPathRows, entries: CountedEntry[]): ContextPath {
  const path: ContextPath = { leafId: rows.leafId, entries };
  const entryOf = <T extends SessionEntry>(stored: StoredEntry | undefined) => stored?.entry as T | undefined;
  const compaction = entryOf<CompactionEntry>(rows.compaction);
  const modelChange = entryOf<ModelChangeEntry>(rows.modelChange);
  const modelEntry = entryOf<ModelChangeEntry | MessageEntry>(rows.modelEntry);
  const thinkingLevelChange = entryOf<ThinkingLevelChangeEntry>(rows.thinkingLevelChange);
  if (compaction) path.compaction = compaction;
  if (modelChange) path.modelChange = modelChange;
  if (modelEntry) path.modelEntry = modelEntry;
  if (thinkingLevelChange) path.thinkingLevelChange = thinkingLevelChange;
  return path;
}
