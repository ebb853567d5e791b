/**
 * compaction/: the service behind `compaction/prepare`, `compaction/run` and `compaction/status`
 * (the pure rules are in @base-context/core, `compaction/`). turn/end calls `CompactionService.run`.
 */
export { CompactionService, type CompactionServiceOptions, type JobQuery } from "./service.js";
export type { CompactionRunParams } from "./pipeline.js";
export type { CompactionRunContext } from "./reporter.js";
export type { CompactHookContext, CompactHookOutcome, CompactHooks } from "../hooks/compact-hooks.js";
export type { CompactionDetails } from "./summarize.js";
export { isAbandoned, isProcessAlive } from "./jobs.js";
