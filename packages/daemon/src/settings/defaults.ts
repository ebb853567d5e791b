/** Default settings (docs/design.md#files-and-merge) and the list of keys the settings have. */
import { DEFAULT_SETTINGS, Settings } from "@base-context/protocol";
import { z } from "zod";

export { DEFAULT_SETTINGS };

export type SectionName = keyof Settings;

/**
 * Every `section.key` the settings have, read from the protocol's schema so a key added there is
 * reported in `sources` without a change here. A nested group (`compaction.prune`) is listed key
 * by key with a dotted `key` ("prune.minTokens"), so a file can set one key of it.
 */
export const SETTING_KEYS: readonly (readonly [SectionName, string])[] = (Object.keys(Settings.shape) as SectionName[]).flatMap((section) =>
  leafKeys(Settings.shape[section]).map((key) => [section, key] as const),
);

function leafKeys(schema: z.ZodType): string[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([key, value]) =>
    value instanceof z.ZodObject ? leafKeys(value).map((inner) => `${key}.${inner}`) : [key],
  );
}

/** The value at a dotted key inside a section's object (undefined when a level is missing). */
export function valueAt(section: unknown, dottedKey: string): unknown {
  let value: unknown = section;
  for (const part of dottedKey.split(".")) {
    if (typeof value !== "object" || value === null || !(part in value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Sets a dotted key inside a section's object (its levels exist: the defaults have them all). */
export function setValueAt(section: Record<string, unknown>, dottedKey: string, value: unknown): void {
  const parts = dottedKey.split(".");
  let target = section;
  for (const part of parts.slice(0, -1)) target = target[part] as Record<string, unknown>;
  target[parts[parts.length - 1]!] = value;
}

export const SECTION_NAMES: readonly SectionName[] = Object.keys(Settings.shape) as SectionName[];

/** Returns a deep copy, so callers can never mutate the shared defaults. */
export function defaultSettings(): Settings {
  return structuredClone(DEFAULT_SETTINGS);
}
