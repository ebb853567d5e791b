import { TreeDidNavigate, TreeNavigate } from "@base-context/protocol";
import type { TreeService } from "../../tree/index.js";
import type { Router } from "../router.js";

/** `tree/navigate`: cancellable, `$/progress` with the request's `workDoneToken`, `tree/didNavigate` once the leaf moved. */
export function registerTreeHandlers(router: Router, tree: TreeService): void {
  router.handle(TreeNavigate, (params, ctx) =>
    tree.navigate(params, {
      signal: ctx.signal,
      clientModel: ctx.clientModel,
      progress: (value) => ctx.progress(params.workDoneToken, value),
      onNavigated: (event) => ctx.notify(TreeDidNavigate, event),
    }),
    { cancelOnShutdown: true },
  );
}
