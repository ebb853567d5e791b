/**
 * `doctor`'s line on which sessions a project's plugins run for. A project's plugins
 * (`<project>/.base-context/plugins/`) run for the sessions started in the project's own folder
 * (plugins/applies.ts): an agent started in a subfolder gets none of them, and nothing else says
 * so. The line counts the sessions of the database started in the project and in its subfolders.
 */
import { readdirSync } from "node:fs";
import { join, sep } from "node:path";
import type { Daemon } from "../daemon.js";
import { normalizeProjectDir } from "../plugins/trust.js";
import type { CheckResult } from "./doctor-checks.js";
import { displayPath, plural } from "./output.js";

/** Sessions looked at, at most (newest first). */
const MAX_SESSIONS = 5000;

/** The check, or undefined when the project has no plugins of its own. */
export async function checkPluginSessions(daemon: Daemon, projectDir: string, home: string): Promise<CheckResult | undefined> {
  let names: string[];
  try {
    names = readdirSync(join(projectDir, ".base-context", "plugins"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return undefined;
  }
  if (names.length === 0) return undefined;
  const project = normalizeProjectDir(projectDir);
  const inProject: string[] = [];
  const below: string[] = [];
  let cursor: string | undefined;
  for (let seen = 0; seen < MAX_SESSIONS; ) {
    const page = await daemon.sessions.list({ limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
    for (const session of page.sessions) {
      const cwd = session.cwd.length > 0 ? normalizeProjectDir(session.cwd) : "";
      if (cwd === project) inProject.push(session.id);
      else if (cwd.startsWith(project + sep)) below.push(cwd);
    }
    seen += page.sessions.length;
    if (page.nextCursor === undefined) break;
    cursor = page.nextCursor;
  }
  const plugins = `the plugins of ${displayPath(project)} (${names.join(", ")})`;
  if (below.length === 0) {
    return { name: "project plugins", status: "ok", summary: `${plugins} run for the ${plural(inProject.length, "session")} started in it`, fixes: [] };
  }
  return {
    name: "project plugins",
    status: "warn",
    summary:
      `${plugins} do not run for ${plural(below.length, "session")} started in its subfolders (e.g. ${displayPath(below[0]!)}): ` +
      `a project's plugins run for sessions started in the project's own folder (they run for ${plural(inProject.length, "session")} here)`,
    fixes: [
      `Start the agent in ${displayPath(project)}, or put the plugin in the global folder (${displayPath(join(home, "plugins"))}) to run it for every session.`,
    ],
  };
}
