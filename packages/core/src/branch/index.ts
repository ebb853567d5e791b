export { collectEntriesForBranchSummary, findCommonAncestor, type BranchEntries } from "./collect.js";
export { prepareBranchEntries, SUMMARY_SQUEEZE_RATIO, type BranchPreparation } from "./prepare.js";
export {
  assembleBranchSummary,
  BRANCH_SUMMARY_MAX_TOKENS,
  BRANCH_SUMMARY_PREAMBLE,
  BRANCH_SUMMARY_PROMPT,
  buildBranchSummaryRequest,
  NO_BRANCH_CONTENT,
  type BranchSummaryRequestInput,
} from "./prompts.js";
