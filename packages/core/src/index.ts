/**
 * The pure core of Base Context (docs/architecture.md): context building, usage, cut points,
 * compaction preparation, serialization, prompts, file tracking and branch collection. No I/O:
 * the daemon feeds it path entries with their stored token counts. Published as
 * `@base-context/core`; `./plugin-api.ts` is the part plugins see, which the plugin SDK and the
 * daemon's plugin workers both re-export, so plugins and the daemon agree on every rule.
 */
export type { ContextMessage, CountedEntry, LlmMessage } from "./types.js";
export {
  compactionSummaryMessage,
  entryTimestampMs,
  entryToContextMessage,
  isContextVisible,
  isMetadataEntry,
} from "./entry-messages.js";
export {
  latestCompactionIndex,
  selectContextEntries,
  selectionTokens,
  type ContextSelection,
  type CountedCompaction,
} from "./context-selection.js";
export { buildContext, modelInForce, type BuildContextInput, type BuiltContext, type ModelRef } from "./context.js";
export {
  chooseRung,
  describeArguments,
  EMPTY_PRUNE_PLAN,
  isToolResultEntry,
  planFrom,
  planPrune,
  planTailPrune,
  pruneEntryInput,
  prunedOutputs,
  prunedToolResult,
  pruneStub,
  savedBy,
  stubTokenCount,
  thousands,
  withPlan,
  withPrunedCounts,
  type PruneLimits,
  type PrunePlan,
  type PrunedOutputs,
} from "./prune.js";
export { planTruncation, truncationLimits, type TruncationLimits } from "./truncation.js";
export { fitPlan, type PruneGoal } from "./prune-fit.js";
export { fitToWindow, WINDOW_SHARES, WINDOW_SIZE_KEYS, type FittedSizes, type WindowSizes } from "./window-fit.js";
export { convertToLlm, toLlmMessages } from "./convert-to-llm.js";
export { toOpenAIChat } from "./openai-chat.js";
export {
  bashExecutionText,
  branchSummaryText,
  compactionSummaryText,
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
} from "./llm-text.js";
export { escapeWrapperClosingTags, WRAPPER_TAGS } from "./escape-tags.js";
export { MAX_PARAMS_DEPTH, tooDeepAt } from "./nesting.js";
export { commandFileOps, patchFileOps, shellCallFileOps, type CallFileOps } from "./shell-file-ops.js";
export { INJECTED_TEXT_LABEL, INJECTED_TEXT_TYPE, isInjectedText, isInterruption } from "./injected.js";
export { capSummary, summaryCutNote, utf8ByteLength } from "./summary-cap.js";
export {
  compactionThreshold,
  contextUsage,
  estimateContextTokens,
  shouldCompact,
  thresholdDisabledReason,
  usableAssistantUsage,
  usageTotalTokens,
  type ContextTokenEstimate,
  type ContextUsageReport,
  type UsageSettings,
} from "./usage.js";
export {
  addCallFileOps,
  addFileOpsFromDetails,
  addFileOpsFromPrevious,
  computeFileLists,
  createFileOps,
  extractFileOpsFromMessage,
  formatFileOps,
  type FileOperations,
} from "./file-ops.js";
export * from "./compaction/index.js";
export * from "./branch/index.js";
export * from "./retention/index.js";
