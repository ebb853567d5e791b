import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as entries from "./entries.js";
import * as compaction from "./methods/compaction.js";
import * as context from "./methods/context.js";
import * as lifecycle from "./methods/lifecycle.js";
import * as model from "./methods/model.js";
import * as plugins from "./methods/plugins.js";
import * as sessions from "./methods/sessions.js";
import * as settings from "./methods/settings.js";
import * as summarize from "./methods/summarize.js";
import * as tree from "./methods/tree.js";

/**
 * Schemas built when their module loads on purpose: `initialize`'s (built for the first reply
 * anyway) and those whose `.shape`/`.partial()` other code reads at its own load (the settings'
 * keys and defaults). Enums and plain strings are cheap and stay as they are.
 */
const BUILT_AT_LOAD = new Set(["ClientInfo", "ClientCapabilities", "Settings", "PruneSettings", "CompactionSettings"]);

const modules = { entries, compaction, context, lifecycle, model, plugins, sessions, settings, summarize, tree };

function exportedSchemas(): [string, z.ZodType][] {
  return Object.values(modules).flatMap((module) =>
    Object.entries(module as Record<string, unknown>).filter((entry): entry is [string, z.ZodType] => entry[1] instanceof z.ZodType),
  );
}

// A daemon's start loads these modules with the declarations that refer to them, and its first
// `context/build` parses none of these schemas: building them at load cost its first answer
// ~10 ms of CPU (docs/architecture.md#start-path-and-bundles).
describe("the protocol's shared schemas", () => {
  it("are built on first use, not when their module is loaded", () => {
    const lazy: z.ZodLazy[] = [];
    const builtAtLoad: string[] = [];
    for (const [name, schema] of exportedSchemas()) {
      if (schema instanceof z.ZodLazy) lazy.push(schema);
      else if (schema instanceof z.ZodObject || schema instanceof z.ZodUnion || schema instanceof z.ZodOptional) {
        if (!BUILT_AT_LOAD.has(name)) builtAtLoad.push(name);
      }
    }
    expect(builtAtLoad).toEqual([]);
    expect(lazy.length).toBeGreaterThan(50);

    // A lazy schema calls its maker once, when first used: a maker wrapped now and called once
    // when each schema is used below had not run before (at load, or by another schema).
    const made = new Map<z.ZodLazy, number>();
    for (const schema of lazy) {
      const maker = schema._zod.def.getter;
      made.set(schema, 0);
      schema._zod.def.getter = () => {
        made.set(schema, made.get(schema)! + 1);
        return maker();
      };
    }
    for (const schema of lazy) expect(schema._zod.innerType).toBeInstanceOf(z.ZodType);
    expect([...made.values()].filter((count) => count !== 1)).toEqual([]);
  });

  it("validate as the schemas they make", () => {
    const entry = { type: "message", id: "a", parentId: null, timestamp: "t", message: { role: "user", content: "hi" } };
    expect(entries.SessionEntry.parse(entry)).toEqual({ ...entry, message: { role: "user", content: "hi" } });
    const bad = entries.SessionEntry.safeParse({ ...entry, message: { role: "user" } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((issue) => issue.path.join("."))).toEqual(["message.content"]);
    expect(entries.SessionEntry.safeParse({ ...entry, type: "nope" }).success).toBe(false);
    expect(entries.EntryInput.parse({ type: "label", targetId: "a" })).toEqual({ type: "label", targetId: "a" });
    // Defaults still apply through the lazy wrappers.
    expect(entries.AgentMessage.parse({ role: "toolResult", toolCallId: "c", toolName: "t", content: [] })).toMatchObject({ isError: false });
    expect(plugins.CompactHookResult.safeParse({ compaction: { summary: "" } }).success).toBe(false);
    expect(plugins.CompactHookResult.parse(null)).toBeNull();
  });
});
