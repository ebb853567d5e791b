/**
 * `base-context plugins [list | trust | untrust | reload | new]` (and `plugin new <name>`): the
 * plugins of the global folder and of a project, as the daemon sees them. Each command loads the
 * plugins in-process, once, so what it reports is what a daemon would get; daemons already running
 * learn about trust changes and reloads through their file watchers (see nudgeRunningDaemons).
 */
import type { PluginInfo } from "@base-context/protocol";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { globalPluginsRoot } from "../plugins/discovery.js";
import { flag, JSON_OPTION, stringOption, type CommandSpec, type ParsedArgs } from "./args.js";
import { PLUGIN_NEW_SPEC, pluginNew } from "./plugin-new.js";
import { nudgeRunningDaemons, projectOrNone, withPluginHost } from "./plugins-host.js";
import { appliesTo } from "../plugins/applies.js";
import { withDaemon } from "./open-daemon.js";
import { printPlugins, shellPath, type ListedSession } from "./plugins-output.js";
import { resolveSessionId } from "./session-ref.js";
import { displayPath, processIo, writeJson, type CliIo } from "./output.js";
import { CliError, EXIT, runCommand } from "./run.js";

const PROJECT_OPTION = {
  name: "project",
  value: "dir",
  description: "also the plugins of this project (default: the current folder)",
} as const;

const LIST_SPEC: CommandSpec = {
  name: "plugins list",
  summary: "list the global plugins and the project's, with their status",
  description:
    "Global plugins live in $BASE_CONTEXT_HOME/plugins/<name>/ (default ~/.base-context/plugins), a\n" +
    "project's in <project>/.base-context/plugins/<name>/; those run only once the project is trusted.\n" +
    "Each plugin is loaded here, once, to report its status (a running daemon's plugins/list also\n" +
    "shows plugins its crash breaker disabled).",
  options: [
    PROJECT_OPTION,
    { name: "session", value: "id", description: "also its project's plugins, and whether each runs for that session (and why not)" },
    JSON_OPTION,
  ],
  examples: ["base-context plugins", "base-context plugins list --project ~/src/app --json", "base-context plugins --session 5b0c"],
  exitStatus: "Exit status: 0 listed (whatever the plugins' status), 1 failure, 2 usage error.",
};

const TRUST_SPEC: CommandSpec = {
  name: "plugins trust",
  summary: "let a project's plugins run (<project>/.base-context/plugins/)",
  description:
    "Trust is kept in $BASE_CONTEXT_HOME/trust.json, never in the project: cloning a repository is\n" +
    "not enough to run its code. Running daemons that have the project open reload its plugins.",
  arguments: [{ name: "dir", description: "the project folder" }],
  options: [JSON_OPTION],
  examples: ["base-context plugins trust .", "base-context plugins trust ~/src/app"],
};

const UNTRUST_SPEC: CommandSpec = {
  name: "plugins untrust",
  summary: "stop a project's plugins from running",
  arguments: [{ name: "dir", description: "the project folder" }],
  options: [JSON_OPTION],
  examples: ["base-context plugins untrust ~/src/app"],
};

const RELOAD_SPEC: CommandSpec = {
  name: "plugins reload",
  summary: "load plugins again from their files, in every running daemon",
  description:
    "Touches each plugin's package.json: running daemons see the change, load the plugin in a fresh\n" +
    "worker and switch to it once it has loaded (a plugin disabled after repeated crashes runs again).\n" +
    "The plugin is also loaded here, to report whether the new version loads.",
  arguments: [{ name: "id", description: "a plugin id (global:<name>, project:<name>@<dir>) or name; default: all", optional: true }],
  options: [PROJECT_OPTION, JSON_OPTION],
  examples: ["base-context plugins reload", "base-context plugins reload my-summarizer"],
  exitStatus: "Exit status: 0 every reloaded plugin loads, 1 one does not (or no such plugin), 2 usage error.",
};

const SUBCOMMANDS: Record<string, { spec: CommandSpec; run: (args: ParsedArgs, io: CliIo) => Promise<number> }> = {
  list: { spec: LIST_SPEC, run: list },
  trust: { spec: TRUST_SPEC, run: (args, io) => trust(args, io, true) },
  untrust: { spec: UNTRUST_SPEC, run: (args, io) => trust(args, io, false) },
  reload: { spec: RELOAD_SPEC, run: reload },
  new: { spec: PLUGIN_NEW_SPEC, run: pluginNew },
};

export function pluginsHelp(command: string): string {
  const width = Math.max(...Object.keys(SUBCOMMANDS).map((name) => name.length));
  return [
    `Usage: base-context ${command} <command> [options]`,
    "",
    "Plugins replace or cancel the daemon's summaries (session_before_compact, session_before_tree).",
    "See docs/plugins.md to write one.",
    "",
    "Commands:",
    ...Object.entries(SUBCOMMANDS).map(([name, { spec }]) => `  ${name.padEnd(width)}  ${spec.summary}`),
    "",
    `Without a command: list. Help on one: base-context ${command} <command> --help`,
    "",
    "Exit status: 0 ok, 1 failure, 2 usage error.",
    "",
  ].join("\n");
}

/** `plugins …` and `plugin …` (the same commands; `plugin new <name>` reads best in the singular). */
export async function pluginsCommand(argv: string[], io: CliIo = processIo(), command = "plugins"): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") {
    io.stdout.write(pluginsHelp(command));
    return EXIT.ok;
  }
  // `plugins`, `plugins --json`, `plugins --project d`: the list.
  if (first === undefined || first.startsWith("-")) return runSubcommand("list", argv, io);
  if (!(first in SUBCOMMANDS)) {
    io.stderr.write(`base-context ${command}: unknown command "${first}"\n\n${pluginsHelp(command)}`);
    return EXIT.usage;
  }
  return runSubcommand(first, rest, io);
}

function runSubcommand(name: string, argv: string[], io: CliIo): Promise<number> {
  const { spec, run } = SUBCOMMANDS[name]!;
  return runCommand(spec, argv, io, (args) => run(args, io));
}

async function list(args: ParsedArgs, io: CliIo): Promise<number> {
  const projectDir = resolve(stringOption(args, "project") ?? process.cwd());
  const sessionRef = stringOption(args, "session");
  const session = sessionRef === undefined ? undefined : await listedSession(io, sessionRef);
  return withPluginHost(io, async (host, home) => {
    const project = projectOrNone(projectDir, home);
    // With a session: the plugins of its own project too (those are the ones that run for it).
    const plugins = [
      ...new Map(
        [...(await host.list(project)), ...(session ? await host.list(projectOrNone(session.cwd, home)) : [])].map((plugin) => [
          plugin.id,
          plugin,
        ]),
      ).values(),
    ];
    if (flag(args, "json")) {
      const forSession = (plugin: PluginInfo) => (session ? { forSession: appliesTo(plugin, session.cwd) } : {});
      writeJson(io, { ...(session ? { session } : {}), plugins: plugins.map((plugin) => ({ ...plugin, ...forSession(plugin) })) });
    } else printPlugins(io, plugins, { globalRoot: globalPluginsRoot(home), projectDir: project, session });
    return EXIT.ok;
  });
}

/** The session `plugins --session` asks about: its id and folder, from the database. */
async function listedSession(io: CliIo, ref: string): Promise<ListedSession> {
  return withDaemon(io, async (daemon) => {
    const id = await resolveSessionId(daemon, ref);
    return { id, cwd: (await daemon.sessions.get({ sessionId: id })).session.cwd };
  });
}

async function trust(args: ParsedArgs, io: CliIo, trusted: boolean): Promise<number> {
  const projectDir = resolve(args.arguments[0]!);
  // Untrusting a folder that is gone is fine; trusting a typo is not.
  if (trusted && !isDirectory(projectDir))
    throw new CliError(`${projectDir} is not a folder`, ["Give the project's folder: base-context plugins trust <dir>"]);
  return withPluginHost(io, async (host, home) => {
    if (projectOrNone(projectDir, home) === undefined) {
      throw new CliError(`${displayPath(projectDir)}/.base-context is the global folder: its plugins are global plugins and always run`);
    }
    await host.setTrust(projectDir, trusted);
    const plugins = (await host.list(projectDir)).filter((plugin) => plugin.source === "project");
    await nudgeRunningDaemons(plugins);
    if (flag(args, "json")) {
      writeJson(io, { projectDir, trusted, plugins });
      return EXIT.ok;
    }
    const shown = shellPath(projectDir);
    io.stdout.write(trusted ? `Trusted ${shown}: its plugins run.\n` : `${shown} is no longer trusted: its plugins do not run.\n`);
    if (plugins.length > 0) {
      io.stdout.write("\n");
      printPlugins(io, plugins, { globalRoot: globalPluginsRoot(home), projectDir });
    } else {
      io.stdout.write(`(It has no plugins yet: ${displayPath(resolve(projectDir, ".base-context", "plugins"))} is empty or missing.)\n`);
    }
    return EXIT.ok;
  });
}

async function reload(args: ParsedArgs, io: CliIo): Promise<number> {
  const projectDir = resolve(stringOption(args, "project") ?? process.cwd());
  const wanted = args.arguments[0];
  return withPluginHost(io, async (host, home) => {
    const known = await host.list(projectOrNone(projectDir, home));
    const chosen = wanted === undefined ? known : known.filter((plugin) => plugin.id === wanted || plugin.name === wanted);
    if (wanted !== undefined && chosen.length === 0) {
      throw new CliError(`no plugin "${wanted}"`, ["See the plugins with: base-context plugins"]);
    }
    await nudgeRunningDaemons(chosen);
    // The host loaded every plugin when it started: what it says now is how the files load.
    const ids = new Set(chosen.map((plugin) => plugin.id));
    const plugins = (await host.list(projectOrNone(projectDir, home))).filter((plugin) => ids.has(plugin.id));
    const broken = plugins.filter((plugin) => plugin.status === "error");
    if (flag(args, "json")) writeJson(io, { plugins });
    else describeReload(io, plugins, home);
    return broken.length > 0 ? EXIT.failure : EXIT.ok;
  });
}

function describeReload(io: CliIo, plugins: readonly PluginInfo[], home: string): void {
  if (plugins.length === 0) {
    io.stdout.write("No plugins to reload.\n");
    return;
  }
  io.stdout.write(`Running daemons reload ${plugins.map((plugin) => plugin.name).join(", ")} now. As loaded here:\n\n`);
  printPlugins(io, plugins, { globalRoot: globalPluginsRoot(home), projectDir: undefined });
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}
