export { renderTree, FOLD_KEEP_HEAD, FOLD_KEEP_TAIL, FOLD_MIN_HIDDEN, type FlatNode, type RenderTreeOptions } from "./render.js";
export { entryPreview, type EntryKind, type EntryPreview } from "./preview.js";
