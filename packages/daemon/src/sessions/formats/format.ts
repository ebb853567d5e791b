/**
 * What a session file format supplies to `session/import` (import.ts): a test on the file's
 * first lines, and a line parser that turns each line into what the import writer stores. Every
 * format is one module registered in registry.ts; the importer knows none of them by name.
 */
import type { ImportFormat, SessionEntry } from "@base-context/protocol";
import type { IdSource } from "../../ids.js";

export type ParsedLine =
  | { kind: "blank" }
  /**
   * The session the file holds. pi's files start with it; other formats name the session on
   * every line, and their parsers emit it once, before the first entry.
   */
  | {
      kind: "header";
      header: SessionFileHeader;
      /**
       * False when this file's entry ids are made at each import (a pi file of version 1), so a
       * second import of it cannot recognise what the first stored: it is refused as for a format
       * that is not incremental (`session_exists`).
       */
      idsOfItsOwn?: false;
    }
  /** `json`: the line itself, when the entry is exactly the line (nothing migrated): stored as is. */
  | { kind: "entry"; entry: SessionEntry; json?: string }
  /**
   * `id`/`parentId`: those of a skipped line that names them (a well-formed entry refused), so the
   * importer can hang that entry's children under its nearest kept ancestor. `unreadable`: the line
   * could not be read at all (not JSON), so an entry after it may name it as its parent and the
   * import bridges the history over it (import-gaps.ts); `lostId`, the id its text still shows.
   */
  | { kind: "skip"; reason: string; id?: string; parentId?: string | null; unreadable?: { lostId?: string } }
  /** A line the format holds that is not conversation (metadata, progress): skipped on purpose and counted by `what`. */
  | { kind: "ignored"; what: string }
  /** A line whose content went into other output (a title, a compaction held back for its summary). */
  | { kind: "used" };

/** The session a file holds, as every format reads it from its first lines. */
export interface SessionFileHeader {
  id: string;
  createdAt: string | undefined;
  cwd: string | undefined;
  parentSession: string | undefined;
  /** Header fields with no column of their own, kept verbatim (and written back by an export). */
  extra: Record<string, unknown>;
}

/** One line's outcome: most lines give one; a line of another agent may hold several entries. */
export type ParseOutcome = ParsedLine | readonly ParsedLine[];

export interface LineParser {
  parse(text: string, lineNumber: number): ParseOutcome;
  /** After the last line: what was held back waiting for a later line. */
  end?(): readonly ParsedLine[];
  /**
   * The entry the session's leaf should be when it is not the last one stored (side conversations
   * written after the main one); undefined: the last stored entry, as for a pi file.
   */
  leafId?(): string | undefined;
  /**
   * What the parser knows after the lines read so far, as JSON, bounded whatever the file: an
   * import saves it with the offset it stopped at (import-state.ts), and the next one goes on from
   * there with a parser made from it (`createParser(ids, snapshot)`). Undefined: the file cannot be
   * read on from the middle (the next import reads it from its start).
   */
  snapshot?(): unknown;
}

export interface SessionFormat {
  readonly name: ImportFormat;
  /** What such a file is, for messages ("a Claude Code transcript"). */
  readonly label: string;
  /** What a file of this format must hold to name its session, for the error when none does. */
  readonly headerHint: string;
  /**
   * True when the file holds compactions another agent summarized on its own (Claude Code's, Codex's):
   * each is checked at import against the context it replaced, and the report stored in its
   * `details.retention`, as the daemon's own summaries have it (docs/retention.md).
   */
  readonly checksCompactions?: boolean;
  /** Whether the file's first non-blank lines (at most DETECT_LINES, possibly cut short) are of this format. */
  detect(firstLines: readonly string[]): boolean;
  /** `from`: a parser's snapshot to go on from; throws SnapshotError when it is not one this format wrote. */
  createParser(ids: Pick<IdSource, "entryId" | "now">, from?: unknown): LineParser;
}

/** Non-blank lines read to detect a format. */
export const DETECT_LINES = 20;
