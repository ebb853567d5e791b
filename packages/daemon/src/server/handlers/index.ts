/** The handler table: every protocol method the daemon answers, in one place. */
import { ContextBuild, ContextUsage } from "@base-context/protocol";
import type { Daemon } from "../../daemon.js";
import type { Peer, Router } from "../router.js";
import { registerSessionHandlers } from "./sessions.js";

export function registerHandlers(router: Router, daemon: Daemon, _peer: Peer): void {
  registerSessionHandlers(router, daemon.sessions);
  router.handle(ContextBuild, (p) => daemon.context.build(p));
  router.handle(ContextUsage, (p) => daemon.context.usage(p));
}
