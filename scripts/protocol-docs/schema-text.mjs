/**
 * JSON Schema (as `z.toJSONSchema` writes it) → Markdown: a type expression for a field, and a
 * table of an object's fields, nested objects flattened into dotted names.
 */

const MAX_NESTING = 3;

/** A link to a named schema on the types page. */
export const typeLink = (name, fromTypesPage = false) => `[${name}](${fromTypesPage ? "" : "types.md"}#${anchorOf(name)})`;
export const anchorOf = (name) => name.toLowerCase().replace(/[^a-z0-9]+/g, "-");

export function refName(schema) {
  return typeof schema?.$ref === "string" && schema.$ref.startsWith("#/$defs/") ? schema.$ref.slice("#/$defs/".length) : undefined;
}

/** A short type expression: `string`, `"a" \| "b"`, `SessionEntry[]`, `Record<string, unknown>`. */
export function typeText(schema, options = {}) {
  const link = (name) => typeLink(name, options.fromTypesPage);
  if (schema === undefined || schema === true || (typeof schema === "object" && Object.keys(schema).length === 0)) return "any";
  const ref = refName(schema);
  if (ref) return link(ref);
  if ("const" in schema) return `\`${JSON.stringify(schema.const)}\``;
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(" \\| ");
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return union.map((member) => wrap(typeText(member, options))).join(" \\| ");
  if (Array.isArray(schema.type)) return schema.type.map((type) => typeText({ ...schema, type }, options)).join(" \\| ");
  switch (schema.type) {
    case "array":
      return `${wrap(typeText(schema.items, options))}[]`;
    case "object": {
      if (schema.properties && Object.keys(schema.properties).length > 0) return "object";
      const values = schema.additionalProperties;
      return values && values !== true && Object.keys(values).length > 0 ? `Record<string, ${typeText(values, options)}>` : "object";
    }
    case "integer":
      return "integer";
    default:
      return schema.type ?? "any";
  }
}

function wrap(text) {
  return text.includes(" \\| ") ? `(${text})` : text;
}

/**
 * Rows `[field, type, required, notes]` for an object schema; inline nested objects (and arrays
 * of them) become `parent.child` rows. Returns undefined for a schema that is not an object.
 */
export function fieldRows(schema, options = {}, prefix = "", depth = 0) {
  if (schema?.type !== "object" || !schema.properties) return undefined;
  const required = new Set(schema.required ?? []);
  const rows = [];
  for (const [name, field] of Object.entries(schema.properties)) {
    const path = `${prefix}${name}`;
    rows.push([`\`${path}\``, typeText(field, options), required.has(name) ? "yes" : "", notes(field)]);
    if (depth + 1 >= MAX_NESTING) continue;
    const nested = field?.type === "object" ? field : field?.type === "array" && field.items?.type === "object" ? field.items : undefined;
    const suffix = field?.type === "array" ? "[]." : ".";
    if (nested) rows.push(...(fieldRows(nested, options, `${path}${suffix}`, depth + 1) ?? []));
  }
  return rows;
}

function notes(field) {
  const parts = [];
  if (field?.description) parts.push(field.description.replace(/\n/g, " "));
  if (field && "default" in field) parts.push(`default \`${JSON.stringify(field.default)}\``);
  // z.number().int() states the safe-integer range: true of every JSON integer a client sends, so not worth a note.
  const meaningful = (bound) => bound !== undefined && Math.abs(bound) !== Number.MAX_SAFE_INTEGER;
  const limits = [
    field?.minLength === 1 ? "non-empty" : field?.minLength !== undefined ? `at least ${field.minLength} characters` : undefined,
    // A path's bound is in bytes (protocol limits.ts, PathString): its characters' bound is the same number.
    field?.maxUtf8Bytes !== undefined
      ? `at most ${field.maxUtf8Bytes} bytes (UTF-8)`
      : field?.maxLength !== undefined
        ? `at most ${field.maxLength} characters`
        : undefined,
    meaningful(field?.minimum) ? `≥ ${field.minimum}` : undefined,
    meaningful(field?.maximum) ? `≤ ${field.maximum}` : undefined,
    field?.minItems !== undefined ? `at least ${field.minItems} item${field.minItems === 1 ? "" : "s"}` : undefined,
  ].filter(Boolean);
  if (limits.length > 0) parts.push(limits.join(", "));
  return parts.join("; ");
}

/** A Markdown table; `|` inside cells is already escaped by typeText. */
export function markdownTable(header, rows) {
  const line = (cells) => `| ${cells.map((cell) => (cell === "" ? " " : cell)).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/**
 * How a schema reads on a page: a field table for an object, "one of" tables for a union of
 * objects, else the type expression.
 */
export function describeSchema(schema, defs, options = {}) {
  const resolved = refName(schema) && options.inline !== false ? defs[refName(schema)] : schema;
  const rows = fieldRows(resolved, options);
  if (rows) return rows.length === 0 ? "An empty object `{}`." : markdownTable(["field", "type", "required", "notes"], rows);
  const union = resolved?.anyOf ?? resolved?.oneOf;
  if (Array.isArray(union) && union.every((member) => fieldRows(member, options) || refName(member))) {
    // On the types page a named variant is a link (it has its own section); on a method page its fields are shown.
    if (options.fromTypesPage && union.every((member) => refName(member))) {
      return `One of: ${union.map((member) => typeLink(refName(member), true)).join(", ")}.`;
    }
    return union
      .map((member, i) => {
        const name = refName(member);
        const table = fieldRows(name ? defs[name] : member, options);
        const title = `*Variant ${i + 1}${name ? ` (${typeLink(name, options.fromTypesPage)})` : ""}*`;
        return `${title}\n\n${table && table.length > 0 ? markdownTable(["field", "type", "required", "notes"], table) : "`{}`"}`;
      })
      .join("\n\n");
  }
  return `\`${typeText(resolved, options).replace(/`/g, "")}\``;
}
