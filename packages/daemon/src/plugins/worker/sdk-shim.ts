/**
 * What `import … from "@base-context/plugin-sdk"` gives a plugin running in the daemon (the
 * loader hooks map that specifier here). It is the SDK's runtime surface minus the test harness,
 * built from the daemon's own pure core, so plugins summarize with exactly the daemon's rules and
 * a plugin folder needs no node_modules to run. The SDK package exports the same names; a test in
 * packages/plugin-sdk keeps the two lists equal.
 */
import type { PluginDefinition } from "@base-context/protocol";

/** Returns the plugin unchanged: it exists for type inference, a plain object works as well. */
export function definePlugin<T extends PluginDefinition>(plugin: T): T {
  return plugin;
}

export {
  addFileOpsFromDetails,
  buildBranchSummaryRequest,
  buildSummaryRequest,
  computeFileLists,
  convertToLlm,
  createFileOps,
  entryToContextMessage,
  extractFileOpsFromMessage,
  formatFileOps,
  serializeConversation,
  SUMMARIZATION_SYSTEM_PROMPT,
  TOOL_RESULT_MAX_CHARS,
  truncateToolResult,
} from "../../core/index.js";
