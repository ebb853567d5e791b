/**
 * Lines an import could not read (not JSON: a crash mid-write, a redaction tool; longer than the
 * limit). The entry after one names it as its parent, a parent that is nowhere: it would become a
 * root and cut the history in two. The history is bridged over the gap instead: an entry whose
 * parent is an unreadable line hangs under the last entry read before that line. Which unknown
 * parent is the unreadable line: the id its text still shows (the format reads it,
 * `ParsedLine.unreadable.lostId`), or, when its text shows none (cut before its id), the first
 * unknown parent named after it. The skipped line's reason says where its child went
 * (`bridgedTo`), and so does the import's warning.
 */

export interface SkippedLine {
  line: number;
  reason: string;
  /** An unreadable line the history was bridged over: the entry what hung under it was attached to. */
  bridgedTo?: string;
}

interface Gap {
  skip: SkippedLine;
  /** The last entry read before the line; null: none (what hung under it becomes a root). */
  before: string | null;
}

/** Ids read from unreadable lines kept at most (a file of junk lines must not grow the map without end). */
const MAX_LOST_IDS = 10_000;

export class ImportGaps {
  /** The ids unreadable lines still show → their gap. */
  private readonly lost = new Map<string, Gap>();
  /** The latest unreadable line that shows no id, until an entry is attached over it. */
  private anonymous: Gap | undefined;
  /** Parent ids taken for unreadable lines → the entry their children now hang under. */
  private readonly bridged = new Map<string, string | null>();
  /** The skipped lines whose reason says where the history went. */
  private readonly told = new Set<SkippedLine>();

  /** An unreadable line after the entry `before` (the last read; null: none yet); `lostId`, the id its text shows. */
  unreadable(skip: SkippedLine, before: string | null, lostId: string | undefined): void {
    const gap = { skip, before };
    if (lostId === undefined) {
      this.anonymous = gap;
      return;
    }
    if (this.lost.size >= MAX_LOST_IDS) this.lost.delete(this.lost.keys().next().value!);
    this.lost.set(lostId, gap);
  }

  /** True while a parent could still be an unreadable line: only then must an unknown parent be looked up. */
  get open(): boolean {
    return this.lost.size > 0 || this.anonymous !== undefined;
  }

  /**
   * The entry on `line` names `parentId`, which is neither stored nor read. When that is an
   * unreadable line, the parent it gets instead (the last entry read before that line, or null);
   * undefined when it is not (the parent is simply missing: the entry becomes a root, as before).
   */
  parentFor(parentId: string, line: number): string | null | undefined {
    const earlier = this.bridged.get(parentId);
    if (earlier !== undefined) return earlier;
    const gap = this.lost.get(parentId) ?? this.anonymous;
    if (gap === undefined) return undefined;
    if (gap === this.anonymous) this.anonymous = undefined;
    this.bridged.set(parentId, gap.before);
    if (gap.before === null) this.tell(gap.skip, `; its child (line ${line}) became a root: no entry was read before it`);
    else this.tell(gap.skip, `; bridged: its child (line ${line}) was attached to "${gap.before}", the last entry read before it`, gap.before);
    return gap.before;
  }

  /**
   * An entry read after a line that shows no id hangs under the last entry before that line
   * already (formats whose parent is the previous entry, Codex's): the history goes on over it.
   */
  continued(parentId: string | null, line: number): void {
    const gap = this.anonymous;
    if (gap === undefined || gap.before === null || parentId !== gap.before) return;
    this.anonymous = undefined;
    this.tell(gap.skip, `; bridged: the next entry (line ${line}) follows "${gap.before}", the last entry read before it`, gap.before);
  }

  /** For the import's warning: the first unreadable line bridged over, and how many in all. */
  summary(): string | undefined {
    const bridged = [...this.told].filter((skip) => skip.bridgedTo !== undefined);
    if (bridged.length === 0) return undefined;
    const more = bridged.length > 1 ? ` (${bridged.length} unreadable lines bridged in all)` : "";
    return `line ${bridged[0]!.line} could not be read; the history was bridged over it to "${bridged[0]!.bridgedTo}"${more}`;
  }

  /** Says once, on the skipped line, what became of what hung under it. */
  private tell(skip: SkippedLine, what: string, bridgedTo?: string): void {
    if (this.told.has(skip)) return;
    this.told.add(skip);
    skip.reason += what;
    if (bridgedTo !== undefined) skip.bridgedTo = bridgedTo;
  }
}
