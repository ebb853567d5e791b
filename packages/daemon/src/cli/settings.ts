/** `base-context settings [--project dir | --global] [--json]`: the effective settings and where each value comes from. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { SettingsError, SettingsSource } from "@base-context/protocol";
import { settingsForDisplay } from "../sessions/store-display.js";
import { SettingsManager, SETTING_KEYS, valueAt, type SettingsSnapshot } from "../settings/index.js";
import { flag, JSON_OPTION, stringOption, UsageError, type CommandSpec } from "./args.js";
import { displayPath, processIo, quietDaemonLogs, styleFor, table, writeJson, type CliIo, type Style } from "./output.js";
import { EXIT, runCommand } from "./run.js";

export const SETTINGS_SPEC: CommandSpec = {
  name: "settings",
  summary: "show the effective settings and where each value comes from",
  description:
    "Defaults, then the global file ($BASE_CONTEXT_HOME/settings.json, default ~/.base-context/settings.json),\n" +
    "then the project's <project>/.base-context/settings.json. An invalid file is ignored whole and reported.",
  options: [
    { name: "project", value: "dir", description: "the project whose settings apply (default: the current folder)" },
    { name: "global", description: "the global settings alone, without a project" },
    JSON_OPTION,
  ],
  examples: ["base-context settings", "base-context settings --project ~/src/app --json"],
  exitStatus: "Exit status: 0 ok, 1 a settings file is invalid (it is ignored), 2 usage error.",
};

export interface SettingsFileStatus {
  source: "global" | "project";
  path: string;
  exists: boolean;
  valid: boolean;
}

export function settingsCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(SETTINGS_SPEC, argv, io, async (args) => {
    const projectOption = stringOption(args, "project");
    if (projectOption !== undefined && flag(args, "global")) throw new UsageError("give --project or --global, not both");
    const projectDir = flag(args, "global") ? undefined : resolve(projectOption ?? process.cwd());

    quietDaemonLogs();
    const manager = new SettingsManager({ env: io.env, watch: false });
    let snapshot: SettingsSnapshot;
    try {
      // store.url's password is never printed (sessions/store-display.ts).
      snapshot = settingsForDisplay(manager.get(projectDir));
    } finally {
      await manager.dispose();
    }
    const files = settingsFiles(manager.globalPath, projectDir, snapshot.errors);

    if (flag(args, "json")) {
      writeJson(io, { ...(projectDir !== undefined ? { projectDir } : {}), files, ...snapshot });
    } else {
      printSettings(io, { projectDir, files, settings: snapshot.settings, sources: snapshot.sources, errors: snapshot.errors });
    }
    return snapshot.errors.length > 0 ? EXIT.failure : EXIT.ok;
  });
}

export function settingsFiles(globalPath: string, projectDir: string | undefined, errors: readonly SettingsError[]): SettingsFileStatus[] {
  const paths: Array<[SettingsFileStatus["source"], string]> = [["global", globalPath]];
  if (projectDir !== undefined) paths.push(["project", SettingsManager.projectPath(projectDir)]);
  return paths.map(([source, path]) => ({ source, path, exists: existsSync(path), valid: !errors.some((error) => error.path === path) }));
}

interface SettingsView {
  projectDir: string | undefined;
  files: SettingsFileStatus[];
  settings: Record<string, Record<string, unknown>>;
  sources: Record<string, SettingsSource>;
  errors: readonly SettingsError[];
}

function printSettings(io: CliIo, view: SettingsView): void {
  const style = styleFor(io.stdout, io.env);
  io.stdout.write(`${style.bold(view.projectDir !== undefined ? `Settings for ${displayPath(view.projectDir)}` : "Global settings")}\n`);
  io.stdout.write(`${table(view.files.map((file) => [`  ${file.source}`, displayPath(file.path), fileState(file, style)]))}\n\n`);

  const rows = SETTING_KEYS.map(([section, key]) => {
    const dotted = `${section}.${key}`;
    const value = valueAt(view.settings[section], key);
    const source = view.sources[dotted] ?? "default";
    return [
      dotted,
      value === undefined ? style.dim("(not set)") : JSON.stringify(value),
      source === "default" ? style.dim(source) : style.cyan(source),
    ];
  });
  io.stdout.write(`${table([["KEY", "VALUE", "FROM"].map((title) => style.bold(title)), ...rows])}\n`);

  if (view.errors.length > 0) {
    io.stdout.write(`\n${style.red("Problems (each file named here is ignored until it is fixed):")}\n`);
    for (const error of view.errors) io.stdout.write(`  ${error.source} ${displayPath(error.path)}: ${error.message}\n`);
  }
}

function fileState(file: SettingsFileStatus, style: Style): string {
  if (!file.exists) return style.dim("not found");
  return file.valid ? style.green("applied") : style.red("ignored: invalid");
}
