/**
 * Base Context's hook entries in a Claude Code settings file (`~/.claude/settings.json`,
 * `$CLAUDE_CONFIG_DIR/settings.json`, or a project's `.claude/settings.json`): written, found and
 * removed without touching anything else in the file (other hooks, other settings, their order).
 * Our entries are recognised by their command, which always ends in `claude-code hook`.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { CliError } from "./cli-error.js";

/** Claude Code's events and the matcher each entry is registered under (SessionStart: only after a compaction). */
export const HOOK_EVENTS = [
  { event: "PreCompact", matcher: undefined },
  { event: "SessionStart", matcher: "compact" },
  { event: "PostCompact", matcher: undefined },
] as const;

/** Seconds Claude Code gives the hook before it stops it (and goes on without its answer). */
export const HOOK_TIMEOUT_SECONDS = 30;

const OURS = /(?:^|[\s/"'])base-context(?:\.js)?["']?\s+claude-code\s+hook\s*$/;

export function isOurCommand(command: unknown): boolean {
  return typeof command === "string" && OURS.test(command);
}

/** The settings file: the project's `.claude/settings.json`, else Claude Code's configuration folder's. */
export function claudeSettingsPath(env: NodeJS.ProcessEnv, project: string | undefined): string {
  if (project !== undefined) return join(project, ".claude", "settings.json");
  const configDir = env.CLAUDE_CONFIG_DIR !== undefined && env.CLAUDE_CONFIG_DIR.length > 0 ? env.CLAUDE_CONFIG_DIR : join(homedir(), ".claude");
  return join(configDir, "settings.json");
}

type Json = Record<string, unknown>;
interface MatcherGroup {
  matcher?: string;
  hooks?: unknown[];
  [key: string]: unknown;
}

/** The file's settings object ({} when there is no file). A file that is not a JSON object is refused, never overwritten. */
export function readClaudeSettings(path: string): Json {
  if (!existsSync(path)) return {};
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
  if (text.trim().length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not valid JSON (${(error as Error).message}); it was left as it is`, [
      "Fix the file (Claude Code reads it too), then run the command again.",
    ]);
  }
  if (!isObject(value)) throw new CliError(`${path} does not hold a JSON object; it was left as it is`);
  if (value.hooks !== undefined && !isObject(value.hooks)) throw new CliError(`"hooks" in ${path} is not an object; it was left as it is`);
  return value;
}

/** Where our hook is in the settings: the events it is registered for, and their commands. */
export function installedHooks(settings: Json): { event: string; command: string }[] {
  const found: { event: string; command: string }[] = [];
  const hooks = isObject(settings.hooks) ? settings.hooks : {};
  for (const { event } of HOOK_EVENTS) {
    for (const group of groupsOf(hooks[event])) {
      for (const hook of group.hooks ?? [])
        if (isObject(hook) && isOurCommand(hook.command)) found.push({ event, command: hook.command as string });
    }
  }
  return found;
}

/** The settings with our entries set to `command` (replacing any earlier ones of ours), everything else as it was. */
export function withOurHooks(settings: Json, command: string): Json {
  const cleared = withoutOurHooks(settings);
  const hooks: Json = isObject(cleared.hooks) ? { ...cleared.hooks } : {};
  for (const { event, matcher } of HOOK_EVENTS) {
    const entry = { type: "command", command, timeout: HOOK_TIMEOUT_SECONDS };
    const groups = Array.isArray(hooks[event]) ? [...(hooks[event] as unknown[])] : [];
    groups.push({ ...(matcher !== undefined ? { matcher } : {}), hooks: [entry] });
    hooks[event] = groups;
  }
  return { ...cleared, hooks };
}

/** The settings without our entries: a group left empty goes, an event left empty goes, `hooks` left empty goes. */
export function withoutOurHooks(settings: Json): Json {
  if (!isObject(settings.hooks)) return settings;
  const hooks: Json = { ...settings.hooks };
  for (const { event } of HOOK_EVENTS) {
    if (!Array.isArray(hooks[event])) continue;
    const groups: unknown[] = [];
    for (const group of hooks[event] as unknown[]) {
      if (!isObject(group) || !Array.isArray(group.hooks)) {
        groups.push(group);
        continue;
      }
      const kept = group.hooks.filter((hook) => !(isObject(hook) && isOurCommand(hook.command)));
      if (kept.length === group.hooks.length) groups.push(group);
      else if (kept.length > 0) groups.push({ ...group, hooks: kept });
    }
    if (groups.length > 0) hooks[event] = groups;
    else delete hooks[event];
  }
  const { hooks: _old, ...rest } = settings;
  return Object.keys(hooks).length > 0 ? { ...rest, hooks } : rest;
}

/** Written beside the file and renamed over it: Claude Code never reads half a file. */
export function writeClaudeSettings(path: string, settings: Json): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.base-context-${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(settings, null, 2)}\n`);
  renameSync(temporary, path);
}

function groupsOf(value: unknown): MatcherGroup[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
