/** daemon/status: the daemon's version, process, home and store, for a client to show its user. */
import { DaemonStatus } from "@base-context/protocol";
import type { Daemon } from "../../daemon.js";
import type { Router } from "../router.js";
import { SERVER_INFO } from "../serving.js";

export function registerStatusHandler(router: Router, daemon: Daemon): void {
  router.handle(DaemonStatus, () => ({
    serverInfo: SERVER_INFO,
    pid: process.pid,
    uptimeSeconds: Math.round(process.uptime()),
    home: daemon.home,
    // The display form: a PostgreSQL URL's password is never sent (store/store-location.ts).
    store: { engine: daemon.storeLocation.engine, location: daemon.storeLocation.display },
  }));
}
