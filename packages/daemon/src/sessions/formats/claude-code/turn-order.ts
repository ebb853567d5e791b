/**
 * The order in which Claude Code's model gets a turn's lines. Claude Code writes the user's
 * message, then the attachments its harness adds to the turn (the date, a hook's additional
 * context, files read again…); building the request, it moves each run of attachments up, past the
 * user messages before it, to the latest reply or tool result: the model reads the attachments
 * first, then the user's words. The import keeps that order: a user line that is not a tool result
 * is held until the next line that is not an attachment; the attachments read meanwhile are given
 * at once, under what the first held line hung under; then the held lines, after them.
 */
import { SessionEntry } from "@base-context/protocol";
import { SnapshotError, type SnapshotReader } from "../snapshot.js";

interface HeldLine {
  uuid: string;
  entries: SessionEntry[];
}

export class TurnOrder {
  private held: HeldLine[] = [];
  /** While lines are held: what the next attachment hangs under (the first held line's parent, then the latest attachment). */
  private tail: string | null = null;
  /** The attachment lines given while lines were held: lines naming them hang under the run's end once it is given. */
  private attachments: string[] = [];

  get holding(): boolean {
    return this.held.length > 0;
  }

  /** A user line that is not a tool result: its entries (chained from the first) wait for the attachments after it. */
  hold(uuid: string, entries: SessionEntry[]): void {
    if (entries.length === 0) return;
    if (this.held.length === 0) this.tail = entries[0]!.parentId;
    this.held.push({ uuid, entries });
  }

  /** The parent of an attachment whose line names `fileParent`: while lines are held, the run's end so far. */
  attachmentParent(fileParent: string | null): string | null {
    return this.held.length > 0 ? this.tail : fileParent;
  }

  /** An attachment was given as the entry `id`. */
  attached(uuid: string, id: string): void {
    if (this.held.length === 0) return;
    this.tail = id;
    this.attachments.push(uuid);
  }

  /**
   * The held lines' entries, after the attachments given meanwhile (each line's first entry hung
   * under what was given before it), and the uuids that now stand for the run's end: the
   * attachments', which later lines name as their parent.
   */
  flush(): { entries: SessionEntry[]; end: string | undefined; aliases: string[] } {
    if (this.held.length === 0) return { entries: [], end: undefined, aliases: [] };
    const moved = this.attachments.length > 0;
    const entries: SessionEntry[] = [];
    let previous = this.tail;
    for (const { entries: line } of this.held) {
      line.forEach((entry, index) => entries.push(index === 0 && moved ? ({ ...entry, parentId: previous } as SessionEntry) : entry));
      previous = line[line.length - 1]!.id;
    }
    const aliases = this.attachments;
    this.held = [];
    this.attachments = [];
    this.tail = null;
    return { entries, end: previous ?? undefined, aliases };
  }

  snapshot(): unknown {
    return { held: this.held, tail: this.tail, attachments: this.attachments };
  }

  restore(state: SnapshotReader): void {
    this.held = state.list("held").map((line) => {
      if (typeof line !== "object" || line === null) throw new SnapshotError("held: not a line");
      const { uuid, entries } = line as Partial<HeldLine>;
      if (typeof uuid !== "string" || !Array.isArray(entries) || !entries.every((entry) => SessionEntry.safeParse(entry).success)) {
        throw new SnapshotError("held: not a line of entries");
      }
      return { uuid, entries };
    });
    this.tail = state.stringOrNull("tail");
    this.attachments = state.list("attachments").map((uuid) => {
      if (typeof uuid !== "string") throw new SnapshotError("attachments: not a uuid");
      return uuid;
    });
  }
}
