/**
 * The plugin host as the `plugins` commands use it: the user's plugins loaded once (no watching,
 * so the command exits), the API key hidden from them as in the daemon, and always disposed.
 * Also the way these commands reach daemons that are already running: their file watchers.
 */
import type { PluginInfo } from "@base-context/protocol";
import { existsSync } from "node:fs";
import { utimes } from "node:fs/promises";
import { join, resolve } from "node:path";
import { baseContextHome } from "../paths.js";
import type { PluginHost } from "../plugins/index.js";
import { quietDaemonLogs, type CliIo } from "./output.js";

export async function withPluginHost<T>(io: CliIo, work: (host: PluginHost, home: string) => Promise<T>): Promise<T> {
  // Each plugin's state is in the command's output; the host's own log lines would say it twice.
  quietDaemonLogs();
  const { PluginHost } = await import("../plugins/index.js");
  const { SettingsManager } = await import("../settings/index.js");
  const home = baseContextHome(io.env);
  const settings = new SettingsManager({ env: io.env, watch: false });
  const apiKeyEnv = settings.get().settings.summarizer.apiKeyEnv;
  // The plugins run (and are listed) as the daemon would run them: in its worker threads or in child processes.
  const { isolation } = settings.get().settings.plugins;
  await settings.dispose();
  const host = new PluginHost({ home, watch: false, hiddenEnv: () => [apiKeyEnv, "OPENAI_API_KEY"], isolation: () => isolation });
  try {
    await host.start();
    return await work(host, home);
  } finally {
    await host.dispose();
  }
}

/**
 * A project whose `.base-context` is the global folder itself (the home folder, by default)
 * would list the global plugins a second time, as project plugins.
 */
export function projectOrNone(projectDir: string, home: string): string | undefined {
  return resolve(projectDir, ".base-context") === resolve(home) ? undefined : projectDir;
}

/**
 * Daemons already running (each client runs its own) watch their plugin folders: touching a
 * plugin's package.json makes each of them load it again — which re-reads the trust list, and
 * re-enables a plugin their crash breaker disabled. Returns the plugins touched.
 */
export async function nudgeRunningDaemons(plugins: readonly PluginInfo[]): Promise<PluginInfo[]> {
  const now = new Date();
  const touched: PluginInfo[] = [];
  for (const plugin of plugins) {
    const manifest = join(plugin.path, "package.json");
    if (!existsSync(manifest)) continue;
    await utimes(manifest, now, now);
    touched.push(plugin);
  }
  return touched;
}
