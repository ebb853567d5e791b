/**
 * One settings file: read, parse, validate (docs/design.md#invalid-files). A file is applied entirely or not at
 * all: any error (bad JSON, an unknown key, a wrong type, a key a project may not set) makes the
 * whole file ignored, and every error is reported with the file's path and, where possible, the
 * line and column.
 */
import { readFileSync } from "node:fs";
import { Settings, SettingsFile, type SettingsError } from "@base-context/protocol";
import { z } from "zod";
import { SECTION_NAMES, type SectionName } from "./defaults.js";
import { parseJsonWithLocations, type Position } from "./json-locations.js";

export type FileSource = "global" | "project";

export interface LoadedSettingsFile {
  readonly path: string;
  readonly source: FileSource;
  /** The text as read; undefined when there is no file. Used to tell real changes from noise. */
  readonly text: string | undefined;
  /** The validated values; undefined when the file is missing or ignored for errors. */
  readonly values: SettingsFile | undefined;
  readonly errors: SettingsError[];
}

const REDIRECT = "a cloned repository must not redirect the conversation or the API key";
const USER_LIMIT = "the daemon's size limits protect the user's memory and disk: a cloned repository must not raise them";

/**
 * Keys a project file may not set, with why: a cloned repository must not be able to send the
 * conversation (baseURL) or the user's key (apiKeyEnv names which variable is sent) somewhere else,
 * nor loosen how the user's machine is protected (plugin confinement, size limits). Size limits are
 * global-only as a whole (docs/design.md#what-a-project-may-set): they are read where no project is
 * known (the connection's message cap) or bound data shared by every project (the store).
 */
export const PROJECT_FORBIDDEN_KEYS: readonly (readonly [SectionName, string, string])[] = [
  ["summarizer", "baseURL", REDIRECT],
  ["summarizer", "apiKeyEnv", REDIRECT],
  // How the user's plugins are confined is the user's choice, not a cloned repository's.
  ["plugins", "isolation", "how the user's plugins are confined is the user's choice, not a cloned repository's"],
  ["plugins", "maxMessageBytes", USER_LIMIT],
  ["limits", "maxMessageBytes", USER_LIMIT],
  ["limits", "maxEntryBytes", USER_LIMIT],
  ["limits", "maxSummaryBytes", USER_LIMIT],
  ["limits", "maxImportLineBytes", USER_LIMIT],
  ["limits", "maxImportFileBytes", USER_LIMIT],
  ["limits", "maxQueuedOutputBytes", USER_LIMIT],
  // Where every project's conversations are stored: a cloned repository must not send them to its own server.
  ["store", "url", "a cloned repository must not choose the server every conversation is stored on"],
];

/**
 * Values a project file may give a key: only those that narrow where conversations go.
 * `summarizer.provider: "extractive"` keeps them on this machine; `"openai"` or `"auto"` would let a
 * cloned repository send them to a model host the user never chose for it.
 */
export const PROJECT_ALLOWED_VALUES: readonly { section: SectionName; key: string; allowed: readonly unknown[]; why: string }[] = [
  {
    section: "summarizer",
    key: "provider",
    allowed: ["extractive"],
    why: 'a project may keep conversations on this machine ("extractive"), never send them to a model; choose the provider in the global settings',
  },
];

/** Why each key of a project file that would widen where conversations go is refused (empty when none). */
export function projectWideningKeys(values: SettingsFile): { keyPath: [SectionName, string]; message: string }[] {
  const refused: { keyPath: [SectionName, string]; message: string }[] = [];
  for (const [section, key, why] of PROJECT_FORBIDDEN_KEYS) {
    const set = values[section] as Record<string, unknown> | undefined;
    if (set && key in set) {
      refused.push({
        keyPath: [section, key],
        message: `${section}.${key} cannot be set in a project's settings (${why}); set it in the global settings instead`,
      });
    }
  }
  for (const rule of PROJECT_ALLOWED_VALUES) {
    const set = values[rule.section] as Record<string, unknown> | undefined;
    if (set && rule.key in set && !rule.allowed.includes(set[rule.key])) {
      refused.push({
        keyPath: [rule.section, rule.key],
        message: `${rule.section}.${rule.key}: ${JSON.stringify(set[rule.key])} cannot be set in a project's settings (${rule.why})`,
      });
    }
  }
  return refused;
}

export function readSettingsFile(path: string, source: FileSource): LoadedSettingsFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { path, source, text: undefined, values: undefined, errors: [] };
    const message = `cannot read the file: ${(error as Error).message}`;
    return { path, source, text: `\u0000unreadable:${code ?? "?"}`, values: undefined, errors: [{ source, path, message }] };
  }
  return { path, source, text, ...parseSettingsText(text, path, source) };
}

export function parseSettingsText(
  text: string,
  path: string,
  source: FileSource,
): { values: SettingsFile | undefined; errors: SettingsError[] } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // An empty file (an editor creating it, `touch`) sets nothing; that is not an error.
  if (body.trim().length === 0) return { values: {}, errors: [] };

  const parsed = parseJsonWithLocations(body);
  if (!parsed.ok) {
    return { values: undefined, errors: [{ source, path, message: `${at(parsed.position)}invalid JSON: ${parsed.message}` }] };
  }

  const result = SettingsFile.safeParse(parsed.value);
  if (!result.success) {
    const errors: SettingsError[] = [];
    for (const issue of result.error.issues) {
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          const keyPath = [...issue.path, key];
          errors.push({
            source,
            path,
            message: `${at(parsed.locate(keyPath))}${dotted(keyPath)}: unknown setting${suggestion(issue.path, key)}`,
          });
        }
      } else if (issue.path.length === 0) {
        errors.push({ source, path, message: `${at(parsed.locate([]))}settings must be a JSON object (${issue.message})` });
      } else {
        errors.push({ source, path, message: `${at(parsed.locate(issue.path))}${dotted(issue.path)}: ${issue.message}` });
      }
    }
    return { values: undefined, errors };
  }

  if (source === "project") {
    const refused = projectWideningKeys(result.data);
    if (refused.length > 0) {
      const errors = refused.map(({ keyPath, message }) => ({ source, path, message: `${at(parsed.locate(keyPath))}${message}` }));
      return { values: undefined, errors };
    }
  }
  return { values: result.data, errors: [] };
}

function at(position: Position | undefined): string {
  return position ? `line ${position.line}, column ${position.column}: ` : "";
}

function dotted(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

/** ` (did you mean "enabled"?)` for a near miss among the keys allowed at that place. */
function suggestion(parentPath: readonly PropertyKey[], key: string): string {
  let known: readonly string[] = [];
  if (parentPath.length === 0) known = SECTION_NAMES;
  else if ((SECTION_NAMES as readonly PropertyKey[]).includes(parentPath[0]!)) {
    // Down the schema to the object the key was found in (a section, or a group such as compaction.prune).
    let schema: unknown = Settings.shape[parentPath[0] as SectionName];
    for (const part of parentPath.slice(1)) {
      schema = schema instanceof z.ZodObject ? (schema.shape as Record<string, unknown>)[String(part)] : undefined;
    }
    if (schema instanceof z.ZodObject) known = Object.keys(schema.shape);
  }
  const best = known
    .map((candidate) => ({ candidate, distance: editDistance(candidate.toLowerCase(), key.toLowerCase()) }))
    .filter((c) => c.distance <= Math.max(1, Math.floor(c.candidate.length / 4)))
    .sort((a, b) => a.distance - b.distance)[0];
  return best ? ` (did you mean "${best.candidate}"?)` : "";
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}
