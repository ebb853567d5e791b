/**
 * The whole protocol as one JSON Schema document, made by zod's own `z.toJSONSchema` from the
 * schemas the daemon validates with. For clients in other languages (code generators,
 * validators) and for the generated reference in docs/protocol/.
 *
 * Shape: `messages` maps each method to its kind, direction and `$ref`s to its params and result;
 * `$defs` holds every schema by its export name (`SessionEntry`, `SessionCreateParams`, …).
 * Params a client sends are described as the daemon accepts them (fields with defaults are
 * optional); results and daemon notifications as the daemon sends them. Where the two views of
 * one schema differ, the accepting view is also given, as `<Name>.input`.
 */
import { z } from "zod";
import { PROTOCOL_VERSION } from "./methods/lifecycle.js";
import { namedSchemas, protocolMessages, type Direction, type ProtocolArea } from "./registry.js";

export type JsonSchema = Record<string, unknown>;

export interface MessageSchemaEntry {
  kind: "request" | "notification";
  direction: Direction;
  area: ProtocolArea;
  /** The export name of the declaration in `@base-context/protocol`. */
  name: string;
  params: { $ref: string };
  result?: { $ref: string };
}

export interface ProtocolJsonSchema {
  $schema: string;
  title: string;
  description: string;
  messages: Record<string, MessageSchemaEntry>;
  $defs: Record<string, JsonSchema>;
}

type View = "input" | "output";
const INPUT_SUFFIX = ".input";
const ref = (name: string) => `#/$defs/${name}`;

export function protocolJsonSchema(): ProtocolJsonSchema {
  const { names, roots } = collect();
  const registry = z.registry<{ id: string }>();
  for (const [schema, name] of names) registry.add(schema, { id: name });
  const convert = (view: View, renamed: ReadonlySet<string>) =>
    defsOf(
      z.toJSONSchema(registry, {
        io: view,
        unrepresentable: "any",
        uri: (id) => ref(view === "input" && renamed.has(id) ? id + INPUT_SUFFIX : id),
      }).schemas,
    );

  const viewOf = (root: Root): View => (root.direction === "toDaemon" ? "input" : "output");
  const output = convert("output", new Set());
  const firstInput = convert("input", new Set());
  const inputRoots = roots.filter((root) => viewOf(root) === "input").map((root) => root.params);
  const outputRoots = roots.flatMap((root) => [...(viewOf(root) === "output" ? [root.params] : []), ...(root.result ? [root.result] : [])]);
  const inputReach = reachable(inputRoots, firstInput);
  const outputReach = reachable(outputRoots, output);
  const renamed = conflicting(inputReach, outputReach, firstInput, output);
  const input = convert("input", renamed);

  const $defs: Record<string, JsonSchema> = {};
  for (const name of outputReach) $defs[name] = output.get(name)!;
  for (const name of inputReach) $defs[renamed.has(name) ? name + INPUT_SUFFIX : name] = input.get(name)!;
  const messages: Record<string, MessageSchemaEntry> = {};
  for (const root of roots) {
    const paramsName = viewOf(root) === "input" && renamed.has(root.params) ? root.params + INPUT_SUFFIX : root.params;
    const entry: MessageSchemaEntry = {
      kind: root.kind,
      direction: root.direction,
      area: root.area,
      name: root.name,
      params: { $ref: ref(paramsName) },
    };
    if (root.result !== undefined) entry.result = { $ref: ref(root.result) };
    messages[root.method] = entry;
  }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: `Base Context protocol ${PROTOCOL_VERSION}`,
    description:
      "JSON-RPC 2.0 messages of base-context, generated from the zod schemas in @base-context/protocol. " +
      "`messages` lists every method; `$defs` holds the schemas they refer to.",
    messages,
    $defs: sortKeys($defs),
  };
}

interface Root {
  method: string;
  kind: "request" | "notification";
  direction: Direction;
  area: ProtocolArea;
  name: string;
  params: string;
  result?: string;
}

/** Names for every schema: export names first, then `<Decl>Params` / `<Decl>Result` for the rest. */
function collect(): { names: Map<z.ZodType, string>; roots: Root[] } {
  const names = new Map<z.ZodType, string>();
  for (const [name, schema] of namedSchemas()) names.set(schema, name);
  const nameFor = (schema: z.ZodType, fallback: string): string => {
    const known = names.get(schema);
    if (known !== undefined) return known;
    names.set(schema, fallback);
    return fallback;
  };
  const roots = protocolMessages().map(({ area, name, direction, decl }): Root => {
    const root: Root = { method: decl.method, kind: decl.kind, direction, area, name, params: nameFor(decl.params, `${name}Params`) };
    if (decl.kind === "request") root.result = nameFor(decl.result, `${name}Result`);
    return root;
  });
  return { names, roots };
}

function defsOf(schemas: Record<string, JsonSchema>): Map<string, JsonSchema> {
  const defs = new Map<string, JsonSchema>();
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _schema, $id: _id, ...rest } = schema;
    defs.set(id, rest);
  }
  return defs;
}

/** The names `roots` refer to, directly or through other schemas. */
function reachable(roots: readonly string[], defs: Map<string, JsonSchema>): Set<string> {
  const found = new Set<string>();
  const visit = (name: string): void => {
    if (found.has(name)) return;
    const schema = defs.get(name);
    if (schema === undefined) throw new Error(`protocolJsonSchema: no schema named ${name}`);
    found.add(name);
    for (const target of refsOf(schema)) visit(target);
  };
  for (const root of roots) visit(root);
  return found;
}

/**
 * Schemas needed in both views whose views differ: directly (defaults, stripped keys), or
 * because they refer to one that does (then their `$ref`s differ). These get a `.input` twin.
 */
function conflicting(
  inputReach: Set<string>,
  outputReach: Set<string>,
  input: Map<string, JsonSchema>,
  output: Map<string, JsonSchema>,
): Set<string> {
  const both = [...inputReach].filter((name) => outputReach.has(name));
  const renamed = new Set(both.filter((name) => JSON.stringify(input.get(name)) !== JSON.stringify(output.get(name))));
  for (let grew = true; grew; ) {
    grew = false;
    for (const name of both) {
      if (!renamed.has(name) && refsOf(input.get(name)).some((target) => renamed.has(target))) {
        renamed.add(name);
        grew = true;
      }
    }
  }
  return renamed;
}

function refsOf(schema: unknown, found: string[] = []): string[] {
  if (Array.isArray(schema)) for (const item of schema) refsOf(item, found);
  else if (typeof schema === "object" && schema !== null) {
    for (const [key, value] of Object.entries(schema)) {
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")) found.push(value.slice("#/$defs/".length));
      else refsOf(value, found);
    }
  }
  return found;
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
