export { findCutPoint, findTurnStartIndex, isTurnStart, isValidCutPoint, type CutPoint } from "./cut-point.js";
export { NothingToCompact, prepareCompaction, type PrepareCompactionResult } from "./prepare.js";
export { compactionRangeStart, isCheckedCompaction, restoredSummary } from "./restore.js";
export {
  buildSummaryRequest,
  INITIAL_SUMMARY_PROMPT,
  summaryMaxTokens,
  SUMMARIZATION_SYSTEM_PROMPT,
  TURN_PREFIX_SUMMARY_PROMPT,
  UPDATE_SUMMARY_PROMPT,
  withCustomInstructions,
  wrapConversation,
  type SummaryKind,
  type SummaryRequest,
  type SummaryRequestInput,
} from "./prompts.js";
export { serializeConversation, TOOL_RESULT_MAX_CHARS, truncateToolResult } from "./serialize.js";
export {
  appendFileOps,
  assembleCompactionSummary,
  mergeSplitTurn,
  NO_PRIOR_HISTORY,
  planCompactionSummary,
  SPLIT_TURN_SEPARATOR,
  stripFileOps,
  type CompactionSummaryPlan,
  type SummaryAnswers,
} from "./summary.js";
export { planWithinBudget, windowSummaryBudget, type SummaryBudget } from "./summary-budget.js";
