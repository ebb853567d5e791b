/**
 * A line parser's state as JSON (`LineParser.snapshot`), saved with the byte offset an import
 * stopped at (import-state.ts) and read back when the next import goes on from there. A saved
 * state is a file anyone could have edited: reading it checks every field, and anything that is
 * not what was written makes the import read the file from its start instead (`SnapshotError`).
 */
import { isJsonObject, type JsonObject } from "./json-line.js";

export class SnapshotError extends Error {}

/** The latest `max` pairs of a map (insertion order), so a snapshot stays small whatever the file. */
export function latestPairs<K, V>(map: ReadonlyMap<K, V>, max: number): [K, V][] {
  const pairs = [...map];
  return pairs.length > max ? pairs.slice(pairs.length - max) : pairs;
}

/** Typed reads of a snapshot's fields; a field that is missing or of another type throws SnapshotError. */
export class SnapshotReader {
  private readonly value: JsonObject;

  constructor(value: unknown, what: string) {
    if (!isJsonObject(value)) throw new SnapshotError(`${what}: not an object`);
    this.value = value;
  }

  string(key: string): string {
    const field = this.value[key];
    if (typeof field !== "string") throw new SnapshotError(`${key}: not a string`);
    return field;
  }

  /** A string, or undefined when the field is absent or null. */
  optionalString(key: string): string | undefined {
    const field = this.value[key];
    return field === undefined || field === null ? undefined : this.string(key);
  }

  /** A string or null (a parent that is none). */
  stringOrNull(key: string): string | null {
    return this.value[key] === null ? null : this.string(key);
  }

  number(key: string): number {
    const field = this.value[key];
    if (typeof field !== "number" || !Number.isFinite(field)) throw new SnapshotError(`${key}: not a number`);
    return field;
  }

  optionalNumber(key: string): number | undefined {
    const field = this.value[key];
    return field === undefined || field === null ? undefined : this.number(key);
  }

  boolean(key: string): boolean {
    const field = this.value[key];
    if (typeof field !== "boolean") throw new SnapshotError(`${key}: not a boolean`);
    return field;
  }

  object(key: string): JsonObject {
    const field = this.value[key];
    if (!isJsonObject(field)) throw new SnapshotError(`${key}: not an object`);
    return field;
  }

  /** An object, or undefined when the field is absent or null. */
  optionalReader(key: string): SnapshotReader | undefined {
    const field = this.value[key];
    return field === undefined || field === null ? undefined : this.reader(key);
  }

  reader(key: string): SnapshotReader {
    return new SnapshotReader(this.object(key), key);
  }

  /** `[string, V][]` pairs as a map, each value checked by `value`. */
  pairs<V>(key: string, value: (field: unknown) => V): Map<string, V> {
    const field = this.value[key];
    if (!Array.isArray(field)) throw new SnapshotError(`${key}: not a list`);
    const map = new Map<string, V>();
    for (const pair of field) {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string") throw new SnapshotError(`${key}: not a list of pairs`);
      map.set(pair[0], value(pair[1]));
    }
    return map;
  }

  list(key: string): unknown[] {
    const field = this.value[key];
    if (!Array.isArray(field)) throw new SnapshotError(`${key}: not a list`);
    return field;
  }
}

export function stringValue(field: unknown): string {
  if (typeof field !== "string") throw new SnapshotError("not a string");
  return field;
}

export function stringOrNullValue(field: unknown): string | null {
  return field === null ? null : stringValue(field);
}
