/** How the `plugins` commands show plugins to people: one line each, then what went wrong and what to do. */
import type { PluginInfo, PluginStatus } from "@base-context/protocol";
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

export function printPlugins(
  io: CliIo,
  plugins: readonly PluginInfo[],
  where: { globalRoot: string; projectDir: string | undefined },
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
  const header = ["NAME", "SOURCE", "STATUS", "TRUST", "ISOLATION", "VERSION", "HOOKS", "PATH"].map((title) => style.dim(title));
  const rows = plugins.map((plugin) => [
    plugin.name,
    plugin.source,
    statusText(plugin.status, style),
    plugin.trusted ? "trusted" : style.yellow("not trusted"),
    plugin.isolation,
    plugin.version,
    plugin.hooks.map((hook) => HOOK_SHORT_NAMES[hook] ?? hook).join(",") || "-",
    displayPath(plugin.path),
  ]);
  io.stdout.write(`${table([header, ...rows])}\n`);

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
