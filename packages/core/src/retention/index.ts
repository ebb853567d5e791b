export {
  commandProgram,
  isSleep,
  errorLine,
  isExitNote,
  isMalformedCommand,
  passwordLine,
  saysOnlyExitStatus,
  stderrErrorLine,
  exitedAsDesigned,
  foundNothing,
  hasStackTrace,
  tidyErrorLine,
  startsWithErrorLine,
  ERROR_LINE_MAX,
} from "./errors.js";
export {
  ANY_LATER_SUCCESS,
  actionFailureKeys,
  actionKeys,
  commandFailureKeys,
  commandKey,
  commandKeys,
  contentKey,
  failedCommandNamed,
  programRun,
  MOVED_ON,
  saysFixed,
  shellSegments,
  wasCancelled,
} from "./resolution.js";
export {
  looksPasted,
  opensWithWork,
  ownSentences,
  ownWords,
  readConstraint,
  readRequest,
  unsureConstraintSentences,
  type Reading,
} from "./user-text.js";
export {
  bashFailed,
  callDetails,
  contentText,
  failureKeys,
  readToolResult,
  successKeys,
  toolResultFailed,
  userCommandOutput,
  type FailureKeys,
  type ReadCall,
  type ResultReading,
} from "./tool-results.js";
export { FailureTracker, type Failure, type NewFailure } from "./failures.js";
export { answerText, humanWordsInResult, offeredOptions, type AnsweredQuestion, type HumanWords } from "./human-words.js";
export {
  constraintSentences,
  emptyProbes,
  isGoalRequest,
  isPlanSentence,
  isSummaryText,
  mergeProbes,
  probeMessages,
  readMessages,
  requestText,
  PROBE_KINDS,
  REPAIRED_KINDS,
  type ProbeItem,
  type MessageReader,
  type ProbeKind,
  type RetentionProbes,
  type Unjudged,
} from "./probes.js";
export {
  checkRetention,
  formatRetention,
  isKept,
  normalizeForMatch,
  SummaryIndex,
  MAX_MISSING,
  type KindCount,
  type RetentionReport,
} from "./check.js";
export { junkKind, junkLines, summaryItems, type JunkKind } from "./junk.js";
export {
  carriedProbes,
  criticalLines,
  detailsWithRetention,
  lostItems,
  repairBudgetTokens,
  repairSummary,
  restoreSummary,
  retainSummary,
  type LostItems,
  type RepairResult,
} from "./repair.js";
export { contextProbes } from "./context-probes.js";
export { isLookupCommand } from "./lookups.js";
export { emptySummaryParts, isHarnessLine, parseSummaryParts, type SummaryParts } from "./summary-parts.js";
export { classifyToolCall, reportedExitCode, type ActionKind, type ToolAction } from "./tools.js";
export {
  clip,
  code,
  extractCodeSpans,
  extractIdentifiers,
  extractPaths,
  extractUrls,
  firstLine,
  normalizeKey,
  OrderedSet,
  sentences,
} from "./text.js";
