/** `base-context plugin new <name> [--dir d] [--ts | --js]`: a working plugin folder, and what to do next. */
import { resolve, sep } from "node:path";
import { baseContextHome } from "../paths.js";
import { globalPluginsRoot } from "../plugins/discovery.js";
import { scaffoldPlugin, VALID_NAME, type ScaffoldResult } from "../plugins/scaffold.js";
import { flag, JSON_OPTION, stringOption, UsageError, type CommandSpec, type ParsedArgs } from "./args.js";
import { displayPath, styleFor, writeJson, type CliIo } from "./output.js";
import { shellPath } from "./plugins-output.js";
import { CliError, EXIT } from "./run.js";

export const PLUGIN_NEW_SPEC: CommandSpec = {
  name: "plugin new",
  summary: "create a plugin folder (package.json, index.ts, README) that runs as is",
  description:
    "Written to $BASE_CONTEXT_HOME/plugins/<name>/ (default ~/.base-context/plugins), where a running\n" +
    "daemon loads it at once and reloads it on every save. TypeScript runs without a build step.",
  arguments: [{ name: "name", description: "folder and package name: lowercase letters, digits, -, _ and ." }],
  options: [
    { name: "dir", value: "d", description: "create <d>/<name> instead (e.g. <project>/.base-context/plugins)" },
    { name: "ts", description: "a TypeScript entry, index.ts (the default)" },
    { name: "js", description: "a JavaScript entry, index.js" },
    JSON_OPTION,
  ],
  examples: ["base-context plugin new my-summarizer", "base-context plugin new team-rules --dir .base-context/plugins"],
};

export async function pluginNew(args: ParsedArgs, io: CliIo): Promise<number> {
  const name = args.arguments[0]!;
  if (!VALID_NAME.test(name))
    throw new UsageError(`invalid plugin name "${name}": use lowercase letters, digits, "-", "_" or ".", starting with a letter or digit`);
  if (flag(args, "ts") && flag(args, "js")) throw new UsageError("give --ts or --js, not both");
  const language = flag(args, "js") ? "js" : "ts";
  const globalRoot = globalPluginsRoot(baseContextHome(io.env));
  const dirOption = stringOption(args, "dir");
  const parentDir = dirOption !== undefined ? resolve(dirOption) : globalRoot;

  let created: ScaffoldResult;
  try {
    created = await scaffoldPlugin({ name, parentDir, language });
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error), ["Choose another name, or remove the folder first."]);
  }
  if (flag(args, "json")) {
    writeJson(io, created);
    return EXIT.ok;
  }

  const style = styleFor(io.stdout, io.env);
  const entry = language === "ts" ? "index.ts" : "index.js";
  const runsWhere = whereItRuns(parentDir, globalRoot);
  io.stdout.write(
    [
      `Created ${style.bold(displayPath(created.dir))}`,
      ...created.files.map((file) => `  ${file}`),
      "",
      "Next steps:",
      `  1. Edit ${displayPath(resolve(created.dir, entry))}: session_before_compact can return your own summary or { cancel: true }.`,
      runsWhere,
      "  3. Check it loaded: base-context plugins (status active), or plugins/list from a client.",
      "  4. The plugin API, ctx.complete and testing with the SDK's harness: docs/plugins.md.",
      "",
    ].join("\n"),
  );
  return EXIT.ok;
}

/** Whether a daemon will find the new folder, and if not, where it has to go. */
function whereItRuns(parentDir: string, globalRoot: string): string {
  if (parentDir === resolve(globalRoot))
    return "  2. Save: a running daemon loads it at once and reloads it on every save (no build, no restart).";
  const projectSuffix = `${sep}.base-context${sep}plugins`;
  if (parentDir.endsWith(projectSuffix)) {
    const project = parentDir.slice(0, -projectSuffix.length);
    return `  2. It is a project plugin: it runs once you trust the project: base-context plugins trust ${shellPath(project)}`;
  }
  return `  2. Daemons do not look in ${displayPath(parentDir)}: move the folder to ${displayPath(globalRoot)}/ or to <project>/.base-context/plugins/ to run it.`;
}
