import { SummarizeBranch, SummarizeCompaction } from "@base-context/protocol";
import type { StatelessDeps, StatelessRequest } from "../../compaction/stateless-deps.js";
import { summarizeCompactionStateless } from "../../compaction/stateless-compaction.js";
import type { Daemon } from "../../daemon.js";
import { summarizeBranchStateless } from "../../tree/stateless-branch.js";
import type { RequestContext, Router } from "../router.js";

/** `summarize/compaction` and `summarize/branch`: cancellable, `$/progress` with the request's `workDoneToken`, nothing stored. */
export function registerSummarizeHandlers(router: Router, daemon: Daemon): void {
  const deps: StatelessDeps = {
    settingsFor: (projectDir) => daemon.settings.get(projectDir).settings,
    sourcesFor: (projectDir) => daemon.settings.get(projectDir).sources,
    summarizerFor: (settings, clientModel) => daemon.summarizerFor(settings, clientModel),
  };
  const requestOf = (ctx: RequestContext, workDoneToken: string | number | undefined): StatelessRequest => ({
    projectDir: ctx.projectDir,
    clientModel: ctx.clientModel,
    signal: ctx.signal,
    progress: (value) => ctx.progress(workDoneToken, value),
  });
  router.handle(SummarizeCompaction, (params, ctx) =>
    summarizeCompactionStateless({ ...deps, hooks: daemon.plugins.compactHooks() }, params, requestOf(ctx, params.workDoneToken)),
    { cancelOnShutdown: true },
  );
  router.handle(SummarizeBranch, (params, ctx) =>
    summarizeBranchStateless(
      { ...deps, hooks: daemon.treeHooks, countEntry: (entry) => daemon.counter.countEntry(entry) },
      params,
      requestOf(ctx, params.workDoneToken),
    ),
    { cancelOnShutdown: true },
  );
}
