/** tree/: navigation with branch summaries (docs/design.md#tree-navigation) and the terminal tree view. */
export {
  TreeService,
  TREE_OPERATION,
  type DidNavigateEvent,
  type NavigateOptions,
  type NavigateParams,
  type TreeServiceDeps,
} from "./service.js";
export type { TreeHookContext, TreeHookOutcome, TreeHooks } from "../hooks/tree-hooks.js";
export type { NavigateResult } from "./replay.js";
export { branchTokenBudget, DEFAULT_CONTEXT_WINDOW, NO_SUMMARIZER, summarizeBranch, type BranchSummaryDetails } from "./branch-summary.js";
export { editorTextOf, planNavigation, type NavigationPlan } from "./plan.js";
