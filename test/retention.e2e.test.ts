/**
 * Retention through the real daemon (docs/retention.md): whoever writes the summary — a model
 * that answers one line, a plugin that returns one line — the committed entry keeps every file,
 * error and constraint once repair appended them, and says so in `details.retention` and in the
 * reply. Without repair the report shows what was lost. Over three iterative compactions no
 * repaired item is lost or repeated.
 */
import {
  CompactionRun,
  SessionImport,
  type BaseContextClient,
  type CompactionEntry,
  type EntryInput,
  type RetentionReport,
} from "@base-context/protocol";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { appendAll, assistant, createSession, toolResult, user } from "./fixtures/e2e.js";
import { reply, useFakeOpenAI } from "./support/fake-openai.js";
import { hookPlugin, replaceSummary, usePluginDaemons } from "./support/plugins.js";

const CORPUS_SESSION = fileURLToPath(new URL("../examples/sessions/corpus/cart-totals.jsonl", import.meta.url));
const ONE_LINE = "The user and the assistant worked on the cart.";

const daemons = usePluginDaemons();
/** The default; the plugin test helpers turn it off to see plugin summaries as written. */
const REPAIR_ON = { summary: { repair: true } };
const fake = useFakeOpenAI();

async function modelDaemon(settings: Record<string, unknown> = {}) {
  fake.setHandler(() => reply.text(ONE_LINE));
  const summarizer = { provider: "openai", baseURL: fake.baseURL, model: "fake-summarizer", maxRetries: 0 };
  return daemons.start({ settings: { summarizer, ...REPAIR_ON, ...settings }, env: { OPENAI_API_KEY: "test-key" } });
}

async function importCorpusSession(client: BaseContextClient, cwd: string): Promise<string> {
  const imported = await client.request(SessionImport, { format: "pi-jsonl", path: CORPUS_SESSION, cwd });
  return imported.session.id;
}

async function compactAll(client: BaseContextClient, sessionId: string) {
  const result = await client.request(CompactionRun, { sessionId, settings: { keepRecentTokens: 1 } });
  expect(result.status).toBe("committed");
  return { result, entry: result.entry as CompactionEntry };
}

/** The session's TypeError is fixed later in it: repair never appends a fixed error (docs/retention.md). */
const FIXED_ERROR = "TypeError: cannot read property 'amount' of undefined";

function expectAllKept(retention: RetentionReport | undefined): void {
  expect(retention).toBeDefined();
  for (const kind of ["files", "errors", "constraints"] as const) {
    expect(retention![kind].total, kind).toBeGreaterThan(0);
    const fixed = kind === "errors" ? retention!.missing.errors.filter((e) => e === FIXED_ERROR).length : 0;
    expect(retention![kind].kept + fixed, `${kind}: ${retention!.missing[kind].join(" | ")}`).toBe(retention![kind].total);
  }
}

describe("retention of a weak summary, repaired", () => {
  it("a model answering one line: files, errors and constraints are all kept, the report is on the entry and in the reply", async () => {
    const { client, project } = await modelDaemon();
    const sessionId = await importCorpusSession(client, project);

    const { result, entry } = await compactAll(client, sessionId);

    expect(entry.summary.startsWith(ONE_LINE)).toBe(true);
    expect(entry.summary).toContain("\n## Critical Context\n");
    expect(entry.summary).toContain("- User constraint: Never touch migrations/ in this task, the schema is frozen until the release.");
    // The error still standing is appended; the one fixed later in the session is not.
    expect(entry.summary).toContain("- Error (");
    expect(entry.summary).not.toContain(FIXED_ERROR);
    expectAllKept(result.retention);
    expect((entry.details as { retention?: unknown }).retention).toEqual(result.retention);
    expect(result.retention!.repaired!.constraints).toBeGreaterThan(0);
    // A one-line summary keeps no request: the report says so (requests are not repaired).
    expect(result.retention!.requests.kept).toBe(0);
  });

  it("a plugin returning one line: repaired the same way, its own details kept beside the report", async () => {
    const { client, project } = await daemons.start({
      plugins: { oneliner: hookPlugin({ compact: replaceSummary(ONE_LINE, { by: "oneliner" }) }) },
      settings: REPAIR_ON,
    });
    const sessionId = await importCorpusSession(client, project);

    const { result, entry } = await compactAll(client, sessionId);

    expect(entry.fromHook).toBe(true);
    expect(entry.details).toMatchObject({ by: "oneliner" });
    expectAllKept(result.retention);
    expect((entry.details as { retention?: unknown }).retention).toEqual(result.retention);
  });

  it("with summary.repair off the summary is stored as written and the report shows what it lost", async () => {
    const { client, project } = await modelDaemon({ summary: { repair: false } });
    const sessionId = await importCorpusSession(client, project);

    const { result, entry } = await compactAll(client, sessionId);

    expect(entry.summary).not.toContain("User constraint:");
    expect(result.retention!.repaired).toBeUndefined();
    expect(result.retention!.constraints.kept).toBe(0);
    expect(result.retention!.missing.constraints).toContain(
      "Never touch migrations/ in this task, the schema is frozen until the release.",
    );
    expect(result.retention!.missing.errors).toContain("TypeError: cannot read property 'amount' of undefined");
  });

  it("three iterative compactions by a one-line model: every repaired item kept, none twice", async () => {
    const { client, project } = await modelDaemon();
    mkdirSync(join(project, ".base-context"), { recursive: true });
    writeFileSync(join(project, ".base-context", "settings.json"), "{}");
    const sessionId = await createSession(client, project);
    const rounds: EntryInput[][] = [1, 2, 3].map((n) => [
      user(`Task ${n}: fix the module_${n} loader. Never rename the exports of module_${n}.`),
      assistant("", {
        toolCalls: [{ id: `call_${n}`, name: "edit", arguments: { path: `src/module_${n}.ts`, oldText: "a", newText: "b" } }],
      }),
      toolResult(`call_${n}`, "edit", `Error: oldText not found in src/module_${n}.ts`, true),
      assistant(`Round ${n} done.`),
    ]);

    let summary = "";
    let retention: RetentionReport | undefined;
    for (const round of rounds) {
      await appendAll(client, sessionId, [...round, user("next")]);
      const { result, entry } = await compactAll(client, sessionId);
      summary = entry.summary;
      retention = result.retention;
      expectAllKept(retention);
    }

    expect(retention!.constraints.total).toBe(3);
    expect(retention!.errors.total).toBe(3);
    for (const n of [1, 2, 3]) {
      for (const line of [
        `- User constraint: Never rename the exports of module_${n}.`,
        `Error: oldText not found in src/module_${n}.ts`,
      ]) {
        expect(summary.split(line).length - 1, line).toBe(1);
      }
    }
  });
});
