/**
 * The write at the end of a navigation: the branch summary and/or label entries under the new
 * leaf in one transaction, or a plain leaf move. Same stale rule as compaction: nothing is
 * written unless the old leaf is still the session's leaf.
 *
 * The check reads the leaf synchronously right before the write, with no `await` between them,
 * so no other request of this daemon can slip in. The append also carries `onlyIfOnPath` (checked
 * inside its transaction) against another daemon process moving the leaf elsewhere meanwhile.
 */
import type { EntryInput, RetentionReport } from "@base-context/protocol";
import type { IdSource } from "../ids.js";
import type { SessionService } from "../sessions/index.js";
import { findNavigation, NAVIGATE_METHOD, type NavigateResult, type StoredNavigation } from "./replay.js";

export interface SummaryToWrite {
  summary: string;
  details?: unknown;
  /** Written by a plugin. */
  fromHook?: boolean;
  /** What the summary kept of the branch (also in `details.retention` when details is an object). */
  retention?: RetentionReport;
}

export interface NavigationCommit {
  sessionId: string;
  oldLeafId: string | null;
  targetId: string;
  newLeafId: string | null;
  editorText?: string | undefined;
  summary?: SummaryToWrite | undefined;
  /** On the summary entry when there is one, else on the target. */
  label?: string | undefined;
  requestId?: string | undefined;
  /** The plugin that wrote the summary. */
  pluginId?: string | undefined;
}

export class NavigationCommitter {
  constructor(
    private readonly sessions: SessionService,
    private readonly ids: Pick<IdSource, "entryId">,
  ) {}

  async commit(input: NavigationCommit): Promise<NavigateResult> {
    const { sessionId } = input;
    const records = this.sessions.records;
    // ---- synchronous from here to the store write (see the file comment) ----
    const leafNow = records.requireSession(sessionId).leafId;
    if (leafNow !== input.oldLeafId) return this.stale(input, leafNow);

    const drafts = this.drafts(input);
    const lastDraft = drafts[drafts.length - 1];
    const base: NavigateResult = { status: "moved", leafId: lastDraft?.id ?? input.newLeafId };
    if (input.editorText !== undefined) base.editorText = input.editorText;
    if (input.pluginId !== undefined) base.pluginId = input.pluginId;
    if (input.summary?.retention) base.retention = input.summary.retention;

    if (!lastDraft) {
      // The move and its request result in one transaction, still only from the old leaf.
      const request =
        input.requestId !== undefined ? { id: input.requestId, method: NAVIGATE_METHOD, result: { navigate: base } } : undefined;
      const moved = records.moveLeafIf(sessionId, { from: input.oldLeafId, to: input.newLeafId, ...(request ? { request } : {}) });
      return moved.moved ? base : this.stale(input, moved.leafId);
    }

    const summaryEntryId = input.summary ? drafts[0]!.id : undefined;
    const stored: StoredNavigation = summaryEntryId === undefined ? { navigate: base } : { navigate: base, summaryEntryId };
    const outcome = await this.sessions.appendEntries({
      sessionId,
      entries: drafts,
      parentId: input.newLeafId,
      onlyIfOnPath: input.oldLeafId ?? undefined,
      request: input.requestId !== undefined ? { id: input.requestId, method: NAVIGATE_METHOD, extra: stored } : undefined,
    });
    if (outcome.status === "stale") return this.stale(input, outcome.leafId);
    if (outcome.status === "replayed") {
      // Another daemon process answered the same requestId first: its result is the answer.
      return findNavigation(records, sessionId, input.requestId!) ?? base;
    }
    const result: NavigateResult = { ...base };
    if (summaryEntryId !== undefined) result.summaryEntry = outcome.entries[0]!.entry;
    return result;
  }

  /** Summary entry (child of the new leaf), then the label entry; ids chosen here so the label can name the summary. */
  private drafts(input: NavigationCommit): (EntryInput & { id: string })[] {
    const drafts: (EntryInput & { id: string })[] = [];
    let labelTarget = input.targetId;
    if (input.summary) {
      if (input.oldLeafId === null) throw new Error("unreachable: a branch summary needs an old leaf to come from");
      const id = this.freshId(input.sessionId, drafts);
      const entry: Extract<EntryInput, { type: "branch_summary" }> & { id: string } = {
        type: "branch_summary",
        id,
        summary: input.summary.summary,
        fromId: input.oldLeafId,
      };
      if (input.summary.fromHook) entry.fromHook = true;
      if (input.summary.details !== undefined) entry.details = input.summary.details;
      drafts.push(entry);
      labelTarget = id;
    }
    if (input.label !== undefined) {
      drafts.push({ type: "label", id: this.freshId(input.sessionId, drafts), targetId: labelTarget, label: input.label });
    }
    return drafts;
  }

  private freshId(sessionId: string, taken: readonly { id: string }[]): string {
    for (let attempt = 0; attempt < 100; attempt++) {
      const id = this.ids.entryId();
      if (!taken.some((draft) => draft.id === id) && !this.sessions.records.hasEntry(sessionId, id)) return id;
    }
    throw new Error(`could not find an unused entry id in session "${sessionId}"`);
  }

  private stale(input: NavigationCommit, leafId: string | null): NavigateResult {
    const result: NavigateResult = {
      status: "stale",
      leafId,
      message: `the session's leaf moved from ${input.oldLeafId ?? "(before the root)"} to ${leafId ?? "(before the root)"} while navigating; nothing was written`,
    };
    if (input.requestId !== undefined) {
      this.sessions.records.saveRequestResult(input.sessionId, input.requestId, NAVIGATE_METHOD, { navigate: result });
    }
    return result;
  }
}
