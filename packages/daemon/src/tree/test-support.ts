/**
 * A real store, session service and tree service on a throwaway database, with deterministic ids
 * and a summarizer that records what it was asked. For the tree unit tests only.
 */
import type { EntryInput, SessionEntry, Settings } from "@base-context/protocol";
import { join } from "node:path";
import { SessionLocks } from "../sessions/session-locks.js";
import { CancelledError } from "../errors.js";
import { SessionService } from "../sessions/index.js";
import { FakeCounter, sequentialIds } from "../sessions/fixtures/test-helpers.js";
import { defaultSettings } from "../settings/index.js";
import { SessionStore } from "../store/index.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../summarizer/index.js";
import type { TreeHooks } from "../hooks/tree-hooks.js";
import { TreeService } from "./service.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

/** Answers `## Goal\nExplored the branch (n messages)` and records every request; `hold()` makes the next calls wait. */
export class RecordingSummarizer implements Summarizer {
  readonly id = "test:recorder";
  readonly requests: SummaryRequest[] = [];
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  /** Runs while a summary is being written (e.g. to move the leaf under it). */
  during: (() => void | Promise<void>) | undefined;
  /** The summary's text when set (default: a short goal naming the message count). */
  text: string | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  async summarize(request: SummaryRequest): Promise<SummaryResult> {
    this.requests.push(request);
    await this.during?.();
    if (this.gate) {
      const aborted = new Promise<never>((_, reject) =>
        request.signal?.addEventListener("abort", () => reject(new CancelledError()), { once: true }),
      );
      await Promise.race([this.gate, aborted]);
    }
    if (request.signal?.aborted) throw new CancelledError();
    return { text: this.text ?? `## Goal\nExplored the branch (${request.messages.length} messages)`, summarizer: this.id };
  }
}

export interface TreeFixture {
  store: SessionStore;
  sessions: SessionService;
  tree: TreeService;
  locks: SessionLocks;
  summarizer: RecordingSummarizer;
  settings: Settings;
  sessionId: string;
  append(entry: EntryInput, parentId?: string | null): Promise<SessionEntry>;
  leaf(): string | null;
  close(): Promise<void>;
}

export async function treeFixture(options: { hooks?: TreeHooks } = {}): Promise<TreeFixture> {
  const folder = dirs.make("base-context-tree-");
  const ids = sequentialIds();
  const store = new SessionStore({ path: join(folder, "sessions.db"), ids, checkpoints: "sqlite" });
  const sessions = new SessionService(store, new FakeCounter(), { ids });
  const summarizer = new RecordingSummarizer();
  const settings = defaultSettings();
  const locks = new SessionLocks();
  const tree = new TreeService(
    { sessions, settings: { forSession: () => settings }, locks, ids, summarizerFor: () => summarizer },
    options.hooks,
  );
  const sessionId = (await sessions.create({ cwd: "/projects/app" })).session.id;
  return {
    store,
    sessions,
    tree,
    locks,
    summarizer,
    settings,
    sessionId,
    append: async (entry, parentId) => (await sessions.append({ sessionId, entry, parentId })).entry,
    leaf: () => store.requireSession(sessionId).leafId,
    close: async () => {
      await store.close();
      dirs.remove(folder);
    },
  };
}

export const user = (text: string): EntryInput => ({ type: "message", message: { role: "user", content: text } });

export const assistant = (text: string, calls: { name: string; path: string }[] = []): EntryInput => ({
  type: "message",
  message: {
    role: "assistant",
    content: [
      ...(text ? [{ type: "text" as const, text }] : []),
      ...calls.map((call, index) => ({
        type: "toolCall" as const,
        id: `${call.name}-${index}`,
        name: call.name,
        arguments: { path: call.path },
      })),
    ],
    provider: "openai",
    model: "gpt-4.1",
    stopReason: calls.length > 0 ? "toolUse" : "stop",
  },
});

export const toolResult = (toolCallId: string, toolName: string, text: string): EntryInput => ({
  type: "message",
  message: { role: "toolResult", toolCallId, toolName, content: [{ type: "text", text }], isError: false },
});
