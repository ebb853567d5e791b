/**
 * `summarize/compaction` and `summarize/branch` against the built daemon: the stored pipeline's
 * summary without the store (plugins, summarizer chain with the client's model, retention and
 * repair), cancellation, progress, and bad input.
 */
import {
  ModelComplete,
  SessionList,
  SummarizeBranch,
  SummarizeCompaction,
  type ContextMessage,
  type EntryInput,
  type SessionEntry,
  type SummarizeProgress,
} from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { assistant, rpcError, toolResult, user } from "./fixtures/e2e.js";
import { startDaemon } from "./support/daemon.js";
import { hookPlugin, replaceSummary, usePluginDaemons } from "./support/plugins.js";
import { waitFor } from "./support/wait.js";

const daemons = usePluginDaemons();

const messageOf = (entry: EntryInput): ContextMessage => (entry as { message: ContextMessage }).message;

/** A short piece of work: the goal, a read, an edit, an error and where it ended. */
const WORK: EntryInput[] = [
  user("The config loader crashes on an empty file. Fix src/config.ts and keep the public API unchanged."),
  assistant("Reading the loader.", { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "src/config.ts" } }] }),
  toolResult("call_1", "read", "export function loadConfig(text) { return JSON.parse(text); }"),
  assistant("An empty file makes JSON.parse throw. Guarding it.", {
    toolCalls: [
      {
        id: "call_2",
        name: "edit",
        arguments: { path: "src/config.ts", oldText: "return JSON.parse(text);", newText: "return text.trim() ? JSON.parse(text) : {};" },
      },
    ],
  }),
  toolResult("call_2", "edit", "Edited src/config.ts"),
  assistant("Done: an empty file now loads as {}."),
];
const MESSAGES = WORK.map(messageOf);

/** The same work as pi's session entries (ids, parents, timestamps), for summarize/branch. */
function entriesOf(inputs: EntryInput[]): SessionEntry[] {
  let parentId: string | null = "root0000";
  return inputs.map((input, index) => {
    const id = `e${String(index).padStart(7, "0")}`;
    const entry = {
      ...input,
      id,
      parentId,
      timestamp: new Date(Date.parse("2026-01-10T10:00:00Z") + index * 1000).toISOString(),
    } as SessionEntry;
    parentId = id;
    return entry;
  });
}

describe("summarize/compaction", () => {
  it("summarizes the messages it is sent with the daemon's summarizer, reports files and retention, and stores nothing", async () => {
    const { client } = await daemons.start();
    const progress: SummarizeProgress[] = [];
    client.onProgress<SummarizeProgress>("sum-1", (value) => progress.push(value));

    const result = await client.request(SummarizeCompaction, { messagesToSummarize: MESSAGES, workDoneToken: "sum-1" });

    expect(result.status).toBe("summarized");
    expect(result.summarizer).toBe("extractive");
    expect(result.summary).toContain("## Goal");
    expect(result.summary).toContain("src/config.ts");
    const details = result.details as { readFiles: string[]; modifiedFiles: string[]; summarizer: string; retention: unknown };
    expect(details.modifiedFiles).toEqual(["src/config.ts"]);
    expect(details.summarizer).toBe("extractive");
    expect(details.retention).toEqual(result.retention);
    expect(result.retention!.files.kept).toBeGreaterThan(0);
    await waitFor(() => progress.at(-1)?.kind === "end");
    expect(progress[0]).toMatchObject({ kind: "begin", cancellable: true });
    expect(progress.some((value) => value.kind === "report")).toBe(true);
    expect((await client.request(SessionList, {})).sessions).toEqual([]);
  });

  it("summarizes a split turn: the history and the turn's beginning, or the turn's beginning alone", async () => {
    const { client } = await daemons.start();
    const split = await client.request(SummarizeCompaction, {
      messagesToSummarize: MESSAGES.slice(0, 3),
      turnPrefixMessages: MESSAGES.slice(3, 5),
    });
    expect(split.status).toBe("summarized");
    expect(split.summary).toContain("**Turn Context (split turn):**");
    expect(split.details).toMatchObject({ modifiedFiles: ["src/config.ts"], readFiles: [] });

    const prefixOnly = await client.request(SummarizeCompaction, { messagesToSummarize: [], turnPrefixMessages: MESSAGES.slice(0, 4) });
    expect(prefixOnly.status).toBe("summarized");
    expect(prefixOnly.summary).toContain("src/config.ts");
  });

  it("runs the plugins' session_before_compact: a plugin's summary comes back with its details and the retention report", async () => {
    const { client } = await daemons.start({
      plugins: { marker: hookPlugin({ compact: replaceSummary("## Goal\nFix src/config.ts (MARKER-PLUGIN)", { by: "marker" }) }) },
    });

    const result = await client.request(SummarizeCompaction, {
      messagesToSummarize: MESSAGES,
      firstKeptEntryId: "kept0001",
      tokensBefore: 1234,
      sessionId: "pi-session-1",
    });

    expect(result).toMatchObject({
      status: "summarized",
      summarizer: "plugin:global:marker",
      pluginId: "global:marker",
      firstKeptEntryId: "kept0001",
    });
    expect(result.summary).toContain("MARKER-PLUGIN");
    expect(result.details).toMatchObject({ by: "marker", retention: result.retention });
  });

  it("tells the agent when a plugin cancels", async () => {
    const { client } = await daemons.start({ plugins: { veto: hookPlugin({ compact: "return { cancel: true };" }) } });
    const result = await client.request(SummarizeCompaction, { messagesToSummarize: MESSAGES });
    expect(result).toMatchObject({ status: "cancelled", pluginId: "global:veto" });
    expect(result.summary).toBeUndefined();
  });

  it("asks the client's model when the client offers it, and names it in details", async () => {
    const { d } = await startWithModel(async (params) => {
      expect(params.purpose).toBe("compaction");
      expect(params.messages[0]!.content).toContain("src/config.ts");
      return { text: "## Goal\nMake src/config.ts load empty files.\n\n## Next Steps\n1. Run the tests", model: "agent-llm" };
    });
    const result = await d.client.request(SummarizeCompaction, { messagesToSummarize: MESSAGES, sessionId: "pi-session-2" });
    expect(result.summarizer).toBe("client:agent-llm");
    expect(result.summary).toContain("Make src/config.ts load empty files.");
    expect(result.details).toMatchObject({ summarizer: "client:agent-llm", modifiedFiles: ["src/config.ts"] });
  });

  it("is cancelled by $/cancelRequest: the client's model call is cancelled too and the reply is -32800", async () => {
    let modelSignal: AbortSignal | undefined;
    const { d } = await startWithModel(
      (_params, signal) =>
        new Promise((_resolve, reject) => {
          modelSignal = signal;
          signal.addEventListener("abort", () => reject(new Error("cancelled")));
        }),
    );
    const controller = new AbortController();
    const pending = d.client.request(SummarizeCompaction, { messagesToSummarize: MESSAGES }, { signal: controller.signal });
    await waitFor(() => modelSignal !== undefined);
    controller.abort();
    const error = await rpcError(pending);
    expect(error.code).toBe(-32800);
    await waitFor(() => modelSignal!.aborted);
  });

  it("answers a short session (nothing to summarize) as pi does: the previous summary carried over, no model asked", async () => {
    let modelAsked = 0;
    const { d } = await startWithModel(async () => {
      modelAsked++;
      return { text: "should not be asked", model: "agent-llm" };
    });
    const previousSummary = "## Goal\nMake src/config.ts load empty files.\n\n<read-files>\nsrc/old.ts\n</read-files>";
    const carried = await d.client.request(SummarizeCompaction, {
      messagesToSummarize: [],
      previousSummary,
      fileOps: { readFiles: ["src/config.ts", "src/old.ts"], modifiedFiles: [] },
      firstKeptEntryId: "kept0001",
    });
    expect(carried).toMatchObject({ status: "summarized", summarizer: "none", message: expect.stringContaining("carried over") });
    expect(carried.summary).toContain("Make src/config.ts load empty files.");
    // The file sections are written afresh from the lists sent, not appended twice.
    expect(carried.summary!.split("<read-files>")).toHaveLength(2);
    expect(carried.summary).toContain("<read-files>\nsrc/config.ts\nsrc/old.ts\n</read-files>");
    expect(carried.details).toMatchObject({ summarizer: "none", readFiles: ["src/config.ts", "src/old.ts"], retention: carried.retention });
    expect(carried.retention!.files).toEqual({ kept: 2, total: 2 });

    const first = await d.client.request(SummarizeCompaction, { messagesToSummarize: [] });
    expect(first).toMatchObject({ status: "summarized", summarizer: "none", summary: "No prior history." });
    expect(first.message).toContain("nothing to summarize");
    expect(modelAsked).toBe(0);
  });

  it("lets a plugin write the summary of a short session too", async () => {
    const compact = `
      return { compaction: { summary: "MARKER-SHORT " + event.preparation.messagesToSummarize.length, firstKeptEntryId: event.preparation.firstKeptEntryId, tokensBefore: 0 } };`;
    const { client } = await daemons.start({ plugins: { marker: hookPlugin({ compact }) } });
    const result = await client.request(SummarizeCompaction, { messagesToSummarize: [], firstKeptEntryId: "kept0001" });
    expect(result).toMatchObject({ status: "summarized", pluginId: "global:marker", summary: "MARKER-SHORT 0" });
  });

  it("answers bad input with invalid_params, naming the field", async () => {
    const { client } = await daemons.start();
    const wrongRole = await rpcError(
      client.request(SummarizeCompaction, { messagesToSummarize: [{ role: "narrator", content: "?" } as never] }),
    );
    expect(wrongRole).toMatchObject({ code: -32602, data: { code: "invalid_params" } });
    expect(wrongRole.data!.issues![0]!.path).toMatch(/^messagesToSummarize\.0/);

    const badSettings = await rpcError(
      client.request(SummarizeCompaction, { messagesToSummarize: MESSAGES, settings: { reserveTokens: -1 } }),
    );
    expect(badSettings.data!.issues![0]!.path).toBe("settings.reserveTokens");
  });
});

describe("summarize/branch", () => {
  it("summarizes the entries being left, with the file lists and the retention report", async () => {
    const { client } = await daemons.start();
    const result = await client.request(SummarizeBranch, { entries: entriesOf(WORK) });
    expect(result.status).toBe("summarized");
    expect(result.summary).toContain("src/config.ts");
    expect(result.details).toMatchObject({ modifiedFiles: ["src/config.ts"], summarizer: "extractive", retention: result.retention });
  });

  it("runs the plugins' session_before_tree with the preparation the agent describes", async () => {
    const tree = `
      const p = event.preparation;
      return { summary: { summary: "MARKER-TREE " + p.entriesToSummarize.length + " entries to " + p.targetId, details: { wanted: p.userWantsSummary, label: p.label } } };`;
    const { client } = await daemons.start({ plugins: { marker: hookPlugin({ tree }) } });
    const result = await client.request(SummarizeBranch, { entries: entriesOf(WORK), targetId: "root0000", label: "first try" });
    expect(result).toMatchObject({ status: "summarized", pluginId: "global:marker" });
    expect(result.summary).toContain(`MARKER-TREE ${WORK.length} entries to root0000`);
    expect(result.details).toMatchObject({ wanted: true, label: "first try", retention: result.retention });
  });

  it("answers bad input with invalid_params", async () => {
    const { client } = await daemons.start();
    expect(await rpcError(client.request(SummarizeBranch, { entries: [] }))).toMatchObject({
      code: -32602,
      data: { code: "invalid_params" },
    });
    const noId = await rpcError(client.request(SummarizeBranch, { entries: [{ type: "message", message: messageOf(WORK[0]!) } as never] }));
    expect(noId.data!.issues![0]!.path).toMatch(/^entries\.0/);
  });
});

type ModelAnswer = (
  params: { purpose: string; messages: { content: string }[] },
  signal: AbortSignal,
) => Promise<{ text: string; model?: string }>;

/** A daemon whose client offers its model at initialize. */
async function startWithModel(model: ModelAnswer) {
  const home = daemons.dirs.make("bc-summarize-home-");
  const d = daemons.closeAfterTest(
    await startDaemon({ home, initialize: false, settings: { summarizer: { maxRetries: 0, fallback: false } } }),
  );
  d.client.onRequest(ModelComplete, (params, signal) => model(params, signal));
  await d.client.initialize({ clientInfo: { name: "agent" } });
  return { d };
}
