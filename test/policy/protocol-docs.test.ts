/**
 * The protocol reference in docs/ is generated (scripts/gen-protocol-docs.mjs) and committed; this
 * regenerates it into a temporary folder and compares, so a schema change without `pnpm run docs`
 * fails here. Also checks that the registry the generator enumerates misses no declaration.
 */
import * as protocol from "@base-context/protocol";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { tempDirs } from "../support/temp-dir.js";

const ROOT = join(import.meta.dirname, "..", "..");
const DOCS = join(ROOT, "docs");
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

function generatedFiles(docsDir: string): string[] {
  const folder = join(docsDir, "protocol");
  const files = readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((name) => statSync(join(folder, name)).isFile())
    .map((name) => relative(docsDir, join(folder, name)));
  return ["protocol.md", ...files].sort();
}

describe("the protocol reference", () => {
  it("is up to date with the schemas and the daemon (run `pnpm run docs` after changing either)", { timeout: 180_000 }, async () => {
    const out = dirs.make("bc-protocol-docs-");
    await promisify(execFile)(process.execPath, [join(ROOT, "scripts", "gen-protocol-docs.mjs"), "--out", out], {
      cwd: ROOT,
      timeout: 170_000,
    });
    const fresh = generatedFiles(out);
    expect(generatedFiles(DOCS), "docs/protocol/ has other files than the generator writes: run `pnpm run docs`").toEqual(fresh);
    for (const file of fresh) {
      const committed = readFileSync(join(DOCS, file), "utf8");
      const regenerated = readFileSync(join(out, file), "utf8");
      // One comparison per file, so the failure names the stale file rather than dumping all of them.
      expect(committed === regenerated, `docs/${file} is stale: run \`pnpm run docs\` and commit the result`).toBe(true);
    }
  });

  it("covers every request and notification the protocol package exports", () => {
    const exported = new Set(
      Object.values(protocol as Record<string, unknown>)
        .filter(protocol.isDeclaration)
        .map((decl) => decl.method),
    );
    const registered = protocol.protocolMessages().map((message) => message.decl.method);
    expect(new Set(registered), "a methods/*.ts module is missing from AREA_MODULES in registry.ts").toEqual(exported);
    expect(registered).toContain("entry/didAppend");
  });

  it("has a JSON Schema for every message whose references all resolve", () => {
    const schema = JSON.parse(readFileSync(join(DOCS, "protocol", "schema.json"), "utf8")) as protocol.ProtocolJsonSchema;
    expect(Object.keys(schema.messages).sort()).toEqual(protocol.protocolMessages().map((m) => m.decl.method).sort());
    const refs = JSON.stringify(schema).match(/"#\/\$defs\/[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      const name = ref.slice('"#/$defs/'.length, -1);
      expect(schema.$defs[name], `${ref} points nowhere`).toBeDefined();
    }
    expect(schema.messages["session/create"]).toMatchObject({
      kind: "request",
      direction: "toDaemon",
      params: { $ref: "#/$defs/SessionCreateParams" },
    });
    expect(schema.messages["entry/didAppend"]).toMatchObject({ kind: "notification", direction: "toClient" });
  });
});
