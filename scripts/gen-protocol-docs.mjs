#!/usr/bin/env node
/**
 * Generates the protocol reference from the zod schemas (run after `pnpm build`; `pnpm run docs` does both):
 *
 *   docs/protocol.md              transport, lifecycle, errors, every method
 *   docs/protocol/<area>.md       each area's methods and notifications, with recorded examples
 *   docs/protocol/types.md        the shared schemas
 *   docs/protocol/schema.json     everything as JSON Schema (`protocolJsonSchema()`)
 *
 * The examples are recorded by running the built daemon (scripts/protocol-docs/scenario.mjs)
 * against a temporary BASE_CONTEXT_HOME, then normalized (ids, clock, durations) so the output is
 * the same on every run: test/policy/protocol-docs.test.ts regenerates into a temporary folder and
 * compares with the committed files.
 *
 * Usage: node scripts/gen-protocol-docs.mjs [--out <docs dir>]   (default: docs/ of this repository)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as protocol from "../packages/protocol/dist/index.js";
import { selectExamples } from "./protocol-docs/examples.mjs";
import { indexPage } from "./protocol-docs/index-page.mjs";
import { normalizeExchanges } from "./protocol-docs/normalize.mjs";
import { areaPage, typesPage } from "./protocol-docs/pages.mjs";
import { runScenario } from "./protocol-docs/scenario.mjs";
import { METHOD_SUMMARIES } from "./protocol-docs/summaries.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DAEMON_MAIN = join(ROOT, "packages", "daemon", "dist", "cli", "main.js");

const { values } = parseArgs({ options: { out: { type: "string" } } });
const outDir = values.out ?? join(ROOT, "docs");

const messages = protocol.protocolMessages();
const schema = protocol.protocolJsonSchema();
const examples = selectExamples(await recordExamples());

const files = new Map();
files.set("protocol/schema.json", `${JSON.stringify(schema, null, 2)}\n`);
files.set("protocol/types.md", typesPage(schema));
for (const area of protocol.PROTOCOL_AREAS) {
  const inArea = messages.filter((message) => message.area === area);
  if (inArea.length > 0) files.set(`protocol/${area}.md`, areaPage(area, inArea, schema, examples));
}
const errorExamples = [...examples.values()].flat().filter((example) => example.kind === "request" && example.error && example.title);
files.set(
  "protocol.md",
  indexPage({
    messages,
    areas: protocol.PROTOCOL_AREAS,
    errorCodes: protocol.ErrorCodes,
    appErrorCodes: protocol.AppErrorCode,
    dataCodesOfStandardCodes: { ...protocol.TransportErrorCode, ...protocol.InputErrorCode },
    protocolVersion: protocol.PROTOCOL_VERSION,
    errorExamples,
  }),
);

// docs/protocol/ is entirely generated: what is no longer generated goes.
rmSync(join(outDir, "protocol"), { recursive: true, force: true });
for (const [path, content] of files) {
  mkdirSync(dirname(join(outDir, path)), { recursive: true });
  writeFileSync(join(outDir, path), content);
}

const missingSummaries = messages.filter(({ decl }) => METHOD_SUMMARIES[decl.method] === undefined).map(({ decl }) => decl.method);
const missingExamples = messages.filter(({ decl }) => !examples.has(decl.method)).map(({ decl }) => decl.method);
if (missingSummaries.length > 0) console.error(`no summary line yet (scripts/protocol-docs/summaries.mjs): ${missingSummaries.join(", ")}`);
if (missingExamples.length > 0)
  console.error(`no recorded example yet (scripts/protocol-docs/scenario.mjs): ${missingExamples.join(", ")}`);
console.error(`wrote ${files.size} files to ${relative(process.cwd(), outDir) || "."}: ${[...files.keys()].join(", ")}`);

async function recordExamples() {
  const home = mkdtempSync(join(tmpdir(), "bc-docs-"));
  const env = { ...process.env, BASE_CONTEXT_HOME: home, BASE_CONTEXT_LOG: "error" };
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "BASE_CONTEXT_DB"]) delete env[name];
  const runStartedMs = Date.now();
  try {
    const exchanges = await runScenario({ daemonMain: DAEMON_MAIN, home, socketPath: join(home, "daemon.sock"), env });
    return normalizeExchanges(exchanges, { runStartedMs, home });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
