/**
 * `/bc-status`: which daemon the extension talks to (running or why not, its version, process,
 * home and store, from `daemon/status`) and the last summary's writer, fallback and retention.
 */
import { DaemonStatus, ErrorCodes } from "@base-context/protocol";
import { withTimeout, type DaemonLink } from "./daemon-link.js";
import { summaryLines, type SummaryReport } from "./report.js";

const STATUS_TIMEOUT_MS = 10_000;

export async function statusLines(link: DaemonLink, last: SummaryReport | undefined): Promise<string[]> {
  return ["Base Context", ...(await daemonLines(link)), ...summaryLines(last)];
}

async function daemonLines(link: DaemonLink): Promise<string[]> {
  const where = link.describe();
  try {
    // Opens the connection when there is none (the daemon was stopped, or never started).
    const client = await link.client();
    const info = link.serverInfo();
    const status = await withTimeout(client.request(DaemonStatus, {}), STATUS_TIMEOUT_MS, "no answer to daemon/status").catch(
      (error: unknown) => {
        // A daemon older than daemon/status still says its version at initialize.
        if ((error as { code?: unknown }).code === ErrorCodes.MethodNotFound) return undefined;
        throw error;
      },
    );
    if (!status) return [`Daemon: running, ${info ? `${info.name} ${info.version}` : "version unknown"} — ${where}`];
    return [
      `Daemon: running, ${status.serverInfo.name} ${status.serverInfo.version} (pid ${status.pid}, up ${duration(status.uptimeSeconds)}) — ${where}`,
      `Store: ${status.store.engine === "sqlite" ? "SQLite" : "PostgreSQL"} ${status.store.location}`,
      `Home: ${status.home}`,
    ];
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return [`Daemon: not running — ${where}: ${why}`, "pi writes its own summaries until the daemon can be reached."];
  }
}

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}
