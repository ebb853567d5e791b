/**
 * Makes recorded exchanges the same on every run, so the committed reference can be compared with
 * a fresh one: the daemon's random ids, its clock and timings are replaced by stable stand-ins.
 *
 * - Ids (UUIDs anywhere, 8-hex entry ids under id fields) are numbered in order of first
 *   appearance and replaced by stable ids derived from that number; every mention of an id,
 *   inside error messages and exported JSONL too, gets the same stand-in.
 * - A timestamp the daemon made during the run is replaced by one derived from the object it
 *   belongs to (its `id`) and the field, never from its value: two values that happen to be equal
 *   in one run and a millisecond apart in the next still come out the same.
 * - Durations (`durationMs`) become a fixed number; paths of the temporary home become `~/.base-context`.
 */
import { createHash } from "node:crypto";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const ENTRY_ID = /^[0-9a-f]{8}$/;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
/** Fields whose 8-hex values are entry ids (elsewhere 8 hex digits may be anything). */
const ENTRY_ID_FIELDS = new Set([
  "id", "parentId", "leafId", "entryId", "targetId", "firstKeptEntryId", "fromId", "compactionId",
  "summaryEntryId", "oldLeafId", "assistantEntryId", "entryIds", "summarizeEntryIds", "turnPrefixEntryIds",
]);
/** Where the stand-in clock starts: the story's morning. */
const CLOCK_START = Date.parse("2026-01-15T09:30:00.000Z");
/** Seconds added per field, so created < updated < ended within one object. */
const FIELD_OFFSET_SECONDS = { createdAt: 0, timestamp: 0, updatedAt: 1, endedAt: 1, modifiedAt: 2, loadedAt: 0, at: 0 };
const FIXED_DURATION_MS = 120;

/**
 * @param {import("./recorder.mjs").Exchange[]} exchanges
 * @param {{ runStartedMs: number, home: string }} run
 */
export function normalizeExchanges(exchanges, run) {
  const ids = new IdMap();
  const owners = new Map();
  const isLive = (text) => ISO_TIME.test(text) && Date.parse(text) >= run.runStartedMs - 5 * 60_000;

  // Pass 1: number the ids in order of first appearance (embedded JSON documents included).
  const collect = (value, key) => {
    if (typeof value === "string") {
      if (UUID.test(value)) ids.add(value, "uuid");
      else if (ENTRY_ID.test(value) && ENTRY_ID_FIELDS.has(key)) ids.add(value, "entry");
      else for (const document of embeddedJson(value)) collect(document, undefined);
    } else if (Array.isArray(value)) {
      for (const item of value) collect(item, key);
    } else if (value && typeof value === "object") {
      for (const [childKey, child] of Object.entries(value)) collect(child, childKey);
    }
  };
  collect(exchanges, undefined);

  // Pass 2: replace.
  const replaceIn = (text) =>
    text
      .replaceAll(run.home, "~/.base-context")
      .replace(UUID_ANYWHERE, (uuid) => ids.get(uuid) ?? uuid)
      .replace(/\b[0-9a-f]{8}\b/g, (hex) => ids.get(hex) ?? hex);
  const rewrite = (value, key, owner) => {
    if (typeof value === "string") {
      if (isLive(value)) return ownerTime(owners, owner, key);
      const embedded = rewriteEmbeddedJson(value, (document) => rewrite(document, undefined, undefined));
      return replaceIn(embedded ?? value);
    }
    if (typeof value === "number" && key === "durationMs") return FIXED_DURATION_MS;
    if (Array.isArray(value)) return value.map((item) => rewrite(item, key, owner));
    if (value && typeof value === "object") {
      const ownId = typeof value.id === "string" ? replaceIn(value.id) : owner;
      return Object.fromEntries(Object.entries(value).map(([childKey, child]) => [childKey, rewrite(child, childKey, ownId)]));
    }
    return value;
  };
  return rewrite(exchanges, undefined, undefined);
}

class IdMap {
  #map = new Map();
  #count = { uuid: 0, entry: 0 };
  add(id, kind) {
    if (this.#map.has(id)) return;
    const n = ++this.#count[kind];
    const hex = createHash("sha256").update(`${kind}:${n}`).digest("hex");
    this.#map.set(
      id,
      kind === "uuid"
        ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
        : hex.slice(0, 8),
    );
  }
  get(id) {
    return this.#map.get(id);
  }
}

/** Owners are numbered in order of first appearance; each gets its own minute-sized slot on the clock. */
function ownerTime(owners, owner, key) {
  const name = owner ?? "(none)";
  if (!owners.has(name)) owners.set(name, owners.size);
  const seconds = owners.get(name) * 10 + (FIELD_OFFSET_SECONDS[key] ?? 0);
  return new Date(CLOCK_START + 60_000 + seconds * 1000).toISOString();
}

/** JSON documents inside a string: a JSON object, or JSONL (one object per line). Unparsable lines are skipped. */
function embeddedJson(text) {
  if (!text.startsWith("{")) return [];
  return text.split("\n").flatMap((line) => {
    try {
      return line.startsWith("{") ? [JSON.parse(line)] : [];
    } catch {
      return [];
    }
  });
}

/** The string with every parsable JSON line rewritten, or undefined when it holds none. */
function rewriteEmbeddedJson(text, rewriteDocument) {
  if (!text.startsWith("{")) return undefined;
  let changed = false;
  const lines = text.split("\n").map((line) => {
    if (!line.startsWith("{")) return line;
    try {
      const document = JSON.parse(line);
      changed = true;
      return JSON.stringify(rewriteDocument(document));
    } catch {
      return line;
    }
  });
  return changed ? lines.join("\n") : undefined;
}
