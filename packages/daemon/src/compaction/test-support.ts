/**
 * For the compaction tests (not used by the daemon): a real store in a temporary folder, a
 * deterministic token counter, scripted summarizers and entry builders.
 */
import type { EntryInput, Settings } from "@base-context/protocol";
import { join } from "node:path";
import { CancelledError } from "../errors.js";
import { SessionService } from "../sessions/index.js";
import { FakeCounter, sequentialIds } from "../sessions/fixtures/test-helpers.js";
import { defaultSettings } from "../settings/index.js";
import { SessionStore } from "../store/index.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../summarizer/index.js";
import type { CompactHooks } from "../hooks/compact-hooks.js";
import { CompactionService } from "./service.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

/** ~300 tokens per entry for FakeCounter (JSON chars / 4): keepRecentTokens 450 keeps the last user/assistant pair. */
const filler = (label: string) => `${label} ${"lorem ipsum dolor sit amet ".repeat(36)}`;

export const user = (label: string): EntryInput => ({ type: "message", message: { role: "user", content: filler(label) } });
export const assistant = (label: string, toolCall?: { id: string; name: string; path: string }): EntryInput => ({
  type: "message",
  message: {
    role: "assistant",
    content: [
      { type: "text", text: filler(label) },
      ...(toolCall ? [{ type: "toolCall" as const, id: toolCall.id, name: toolCall.name, arguments: { path: toolCall.path } }] : []),
    ],
    provider: "openai",
    model: "gpt-4.1",
    stopReason: toolCall ? "toolUse" : "stop",
  },
});
export const toolResult = (id: string, name: string, text: string): EntryInput => ({
  type: "message",
  message: { role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text }], isError: false },
});

/** A summarizer whose answers the test scripts; every request is recorded. */
export class ScriptedSummarizer implements Summarizer {
  readonly requests: SummaryRequest[] = [];
  private pending: { resolve(text: string): void; reject(error: unknown): void }[] = [];
  /** "answer": reply at once; "hold": wait for `release()`; a function: reply with its result. */
  mode: "answer" | "hold" | ((request: SummaryRequest) => Promise<SummaryResult>) = "answer";

  constructor(readonly id = "openai:scripted") {}

  async summarize(request: SummaryRequest): Promise<SummaryResult> {
    this.requests.push(request);
    if (typeof this.mode === "function") return this.mode(request);
    if (this.mode === "answer") return { text: `## Goal\n${request.kind} summary ${this.requests.length}`, summarizer: this.id };
    return new Promise<SummaryResult>((resolve, reject) => {
      const onAbort = () => reject(new CancelledError());
      if (request.signal?.aborted) return onAbort();
      request.signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.push({
        resolve: (text) => resolve({ text, summarizer: this.id }),
        reject,
      });
    });
  }

  /** Resolves every held request. */
  release(text = "## Goal\nheld summary"): void {
    for (const waiting of this.pending.splice(0)) waiting.resolve(text);
  }

  get holding(): number {
    return this.pending.length;
  }
}

export interface Harness {
  store: SessionStore;
  sessions: SessionService;
  service: CompactionService;
  summarizer: ScriptedSummarizer;
  settings: Settings;
  sessionId: string;
  append(entry: EntryInput): Promise<string>;
  /** Appends user/assistant pairs (~500 tokens per pair). */
  conversation(pairs: number, prefix?: string): Promise<string[]>;
  entryCount(): number;
  cleanup(): Promise<void>;
}

export async function harness(options: { hooks?: CompactHooks; now?: () => number } = {}): Promise<Harness> {
  const folder = dirs.make();
  const ids = sequentialIds();
  const store = new SessionStore({ path: join(folder, "sessions.db"), ids, checkpoints: "sqlite" });
  const sessions = new SessionService(store, new FakeCounter(), { ids });
  const summarizer = new ScriptedSummarizer();
  const settings = defaultSettings();
  settings.compaction.keepRecentTokens = 450;
  settings.compaction.reserveTokens = 1000;
  let jobs = 0;
  const service = new CompactionService({
    sessions,
    settings: {
      forSession: (id) => {
        store.requireSession(id);
        return settings;
      },
    },
    summarizerFor: () => summarizer,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.now ? { now: options.now } : {}),
    newJobId: () => `job-${++jobs}`,
  });
  const sessionId = (await sessions.create({ cwd: "/projects/app" })).session.id;
  const append = async (entry: EntryInput) => (await sessions.append({ sessionId, entry })).entry.id;
  return {
    store,
    sessions,
    service,
    summarizer,
    settings,
    sessionId,
    append,
    async conversation(pairs, prefix = "turn") {
      const appended: string[] = [];
      for (let i = 0; i < pairs; i++) {
        appended.push(await append(user(`${prefix} ${i} question`)));
        appended.push(await append(assistant(`${prefix} ${i} answer`)));
      }
      return appended;
    },
    entryCount: () => store.requireSession(sessionId).entryCount,
    async cleanup() {
      await store.close();
      dirs.remove(folder);
    },
  };
}

/** Waits until `check` holds (a few ms at most in these tests). */
export async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
