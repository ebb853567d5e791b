/** The handler table: every protocol method the daemon answers, in one place. */
import { CompactionPrepare, CompactionRun, CompactionStatusRequest, ContextBuild, ContextUsage, TurnEnd } from "@base-context/protocol";
import type { Daemon } from "../../daemon.js";
import type { Peer, Router } from "../router.js";
import { registerPluginHandlers } from "./plugins.js";
import { registerSessionHandlers, registerSessionWatch } from "./sessions.js";
import { registerSettingsHandlers } from "./settings.js";
import { registerStatusHandler } from "./status.js";
import { registerSummarizeHandlers } from "./summarize.js";
import { registerTreeHandlers } from "./tree.js";

/** What it returns undoes the connection's subscriptions to daemon events (a socket client leaving). */
export function registerHandlers(router: Router, daemon: Daemon, peer: Peer): { dispose(): void } {
  registerSessionHandlers(router, daemon.sessions);
  const watch = registerSessionWatch(router, daemon.sessions, peer);
  router.handle(ContextBuild, (p) => daemon.context.build(p));
  router.handle(ContextUsage, (p) => daemon.context.usage(p));
  router.handle(CompactionPrepare, (p) => daemon.compaction.prepare(p.sessionId, p.settings, p.contextWindow));
  // Work that waits on a model is cancelled by `shutdown` (Router.finishRequests), storage work finished.
  router.handle(CompactionRun, (p, ctx) => daemon.compaction.run(p, ctx), { cancelOnShutdown: true });
  router.handle(CompactionStatusRequest, (p) => daemon.compaction.status(p));
  router.handle(TurnEnd, (p, ctx) => daemon.turns.end(p, ctx), { cancelOnShutdown: true });
  registerTreeHandlers(router, daemon.tree);
  registerSummarizeHandlers(router, daemon);
  registerStatusHandler(router, daemon);
  const settings = registerSettingsHandlers(router, daemon, peer);
  const plugins = registerPluginHandlers(router, daemon, peer);
  return {
    dispose: () => {
      settings.dispose();
      plugins.dispose();
      watch.dispose();
    },
  };
}
