/**
 * What a plugin imports from `@base-context/plugin-sdk` at run time, minus the SDK's test harness:
 * `definePlugin` and the daemon's own helpers, so a plugin serializes conversations and tracks
 * files exactly as the daemon does. The single list of those names: the SDK package re-exports
 * this module, and inside the daemon the worker's `@base-context/plugin-sdk` module does too.
 */
import type { PluginDefinition } from "@base-context/protocol";

/**
 * Returns the plugin unchanged: it only gives the hooks' `event` and `ctx` their types.
 * A plain object default export works the same.
 */
export function definePlugin<T extends PluginDefinition>(plugin: T): T {
  return plugin;
}

export { convertToLlm } from "./convert-to-llm.js";
export { entryToContextMessage } from "./entry-messages.js";
export {
  addFileOpsFromDetails,
  computeFileLists,
  createFileOps,
  extractFileOpsFromMessage,
  formatFileOps,
  type FileOperations,
} from "./file-ops.js";
export type { LlmMessage } from "./types.js";
export {
  buildSummaryRequest,
  serializeConversation,
  SUMMARIZATION_SYSTEM_PROMPT,
  TOOL_RESULT_MAX_CHARS,
  truncateToolResult,
  type SummaryRequest,
} from "./compaction/index.js";
export { buildBranchSummaryRequest } from "./branch/index.js";
