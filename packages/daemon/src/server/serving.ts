/**
 * What both ways of serving share (stdio, serve-stdio.ts; a Unix socket, serve-socket.ts): the
 * server's name and capabilities in the `initialize` reply, and the start-up log line about the
 * summarizer.
 */
import { IMPORT_FORMATS } from "@base-context/protocol";
import type { Daemon } from "../daemon.js";
import { log } from "../log.js";
import { VERSION } from "../version.js";

export const SERVER_INFO = { name: "base-context", version: VERSION };
export const CAPABILITIES = { contextFormats: ["native", "openai-chat"], importFormats: [...IMPORT_FORMATS] };

/**
 * Says at start which summarizer the daemon uses and where a model's requests go, and — for a
 * user whose key alone used to select a model — what changed and how to restore it.
 */
export async function logSummarizerSetup(daemon: Daemon, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Imported here, not at the top: the summarizers are not on the `initialize` reply's path.
  const { describeSummarizerSetup } = await import("../summarizer/index.js");
  const { settings, sources } = daemon.settings.get();
  const setup = describeSummarizerSetup(settings.summarizer, env, {
    userNamedModel: daemon.userNamedModel(),
    settingsPath: daemon.settings.globalPath,
    providerSetByUser: sources["summarizer.provider"] === "global",
  });
  log("info", `summarizer: ${setup.summary}`);
  if (setup.migration) log("warn", `summarizer: ${setup.migration}`);
}
