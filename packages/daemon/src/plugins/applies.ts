/**
 * Which sessions a plugin runs for. A global plugin runs for every session; a project's plugins
 * (`<project>/.base-context/plugins/`) for the sessions whose folder (`cwd`) is the project's own
 * folder, as the project's settings apply (a session started in a subfolder, or in another
 * project, does not get them). Said where a plugin is skipped (the host's log), listed (`plugins
 * --session`) and checked (`doctor`), so a plugin that never runs for a session is not a mystery.
 */
import { sep } from "node:path";
import { normalizeProjectDir } from "./trust.js";

export type Applies = { applies: true } | { applies: false; why: string };

export function appliesTo(plugin: { source: "global" | "project"; projectDir?: string | undefined }, sessionCwd: string | undefined): Applies {
  if (plugin.source === "global" || plugin.projectDir === undefined) return { applies: true };
  const project = normalizeProjectDir(plugin.projectDir);
  if (sessionCwd === undefined || sessionCwd.length === 0) return { applies: false, why: `the session has no folder (cwd); it runs for sessions in ${project}` };
  const cwd = normalizeProjectDir(sessionCwd);
  if (cwd === project) return { applies: true };
  if (cwd.startsWith(project + sep)) {
    return {
      applies: false,
      why: `the session's folder ${cwd} is inside the project ${project}; a project's plugins run for sessions started in its own folder`,
    };
  }
  return { applies: false, why: `the session's folder ${cwd} is not the project ${project}` };
}
