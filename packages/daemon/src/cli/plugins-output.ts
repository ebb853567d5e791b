/** How the `plugins` commands show plugins to people: one line each, then what went wrong and what to do. */
import type { PluginInfo, PluginStatus } from "@base-context/protocol";
import { appliesTo } from "../plugins/applies.js";
import { displayPath, oneLine, styleFor, table, type CliIo, type Style } from "./output.js";

const HOOK_SHORT_NAMES: Record<string, string> = { session_before_compact: "compact", session_before_tree: "tree" };

function statusText(status: PluginStatus, style: Style): string {
  switch (status) {
    case "active":
      return style.green(status);
    case "untrusted":
      return style.yellow(status);
    default:
      return style.red(status);
  }
}

/** A session the listing says each plugin runs for, or not (`plugins --session`). */
export interface ListedSession {
  id: string;
  cwd: string;
}

/** The sessions a plugin runs for: every one, or those started in its project's folder. */
function runsFor(plugin: PluginInfo): string {
  return plugin.source === "global" || plugin.projectDir === undefined ? "every session" : `sessions in ${displayPath(plugin.projectDir)}`;
}

export function printPlugins(
  io: CliIo,
  plugins: readonly PluginInfo[],
  where: { globalRoot: string; projectDir: string | undefined; session?: ListedSession | undefined },
): void {
  const style = styleFor(io.stdout, io.env);
  if (plugins.length === 0) {
    const places = [
      displayPath(where.globalRoot),
      ...(where.projectDir !== undefined ? [displayPath(`${where.projectDir}/.base-context/plugins`)] : []),
    ];
    io.stdout.write(`No plugins in ${places.join(" or ")}.\nCreate one with: base-context plugin new <name>\n`);
    return;
  }
  const { session } = where;
  const verdicts = new Map(plugins.map((plugin) => [plugin.id, session === undefined ? undefined : appliesTo(plugin, session.cwd)]));
  const titles = ["NAME", "SOURCE", "STATUS", "TRUST", "ISOLATION", "VERSION", "HOOKS", "RUNS FOR", ...(session ? [`SESSION ${session.id.slice(0, 8)}`] : []), "PATH"];
  const rows = plugins.map((plugin) => {
    const verdict = verdicts.get(plugin.id);
    return [
      plugin.name,
      plugin.source,
      statusText(plugin.status, style),
      plugin.trusted ? "trusted" : style.yellow("not trusted"),
      plugin.isolation,
      plugin.version,
      plugin.hooks.map((hook) => HOOK_SHORT_NAMES[hook] ?? hook).join(",") || "-",
      runsFor(plugin),
      ...(verdict === undefined ? [] : [verdict.applies ? style.green("runs") : style.yellow("does not run")]),
      displayPath(plugin.path),
    ];
  });
  io.stdout.write(`${table([titles.map((title) => style.dim(title)), ...rows])}\n`);
  for (const plugin of plugins) {
    const verdict = verdicts.get(plugin.id);
    if (verdict !== undefined && !verdict.applies) io.stdout.write(`\n${style.bold(plugin.name)} does not run for session ${session!.id}: ${verdict.why}.\n`);
  }

  const problems = plugins.filter((plugin) => plugin.lastError !== undefined);
  for (const plugin of problems) {
    const error = plugin.lastError!;
    io.stdout.write(
      `\n${style.bold(plugin.name)}: ${error.kind}${error.hook ? ` in ${error.hook}` : ""}: ${oneLine(error.message, 400)}\n`,
    );
  }
  if (problems.length > 0) {
    io.stdout.write(`\nFix the files and save: a running daemon reloads a plugin when its files change.\n`);
  }
  const untrusted = [...new Set(plugins.filter((plugin) => plugin.status === "untrusted").map((plugin) => plugin.projectDir ?? ""))];
  for (const projectDir of untrusted) {
    io.stdout.write(`\nProject plugins run only once you trust the project: base-context plugins trust ${shellPath(projectDir)}\n`);
  }
}

/** A path as it can be pasted into a shell: short (`~/…`) when nothing needs quoting. */
export function shellPath(path: string): string {
  const short = displayPath(path);
  if (/^[\w@%+=:,./~-]+$/.test(short)) return short;
  return `'${path.replace(/'/g, `'\\''`)}'`;
}
