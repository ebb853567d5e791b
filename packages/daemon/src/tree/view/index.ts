export {
  renderTree,
  rowLine,
  cutVisible,
  visibleLength,
  styler,
  FOLD_KEEP_HEAD,
  FOLD_KEEP_TAIL,
  FOLD_MIN_HIDDEN,
  type FlatNode,
  type RenderTreeOptions,
  type Styler,
} from "./render.js";
export { layoutTree, childrenByParent, isSummaryEntry, rootsOf, subtreeSizes, type TreeRow, type LayoutOptions } from "./layout.js";
export { entryPreview, summaryGoal, type EntryKind, type EntryPreview } from "./preview.js";
export { replacedCounts } from "./replaced.js";
export { filterTree, TREE_FILTERS, type TreeFilter } from "./filter.js";
export { retentionOf } from "./retention.js";
