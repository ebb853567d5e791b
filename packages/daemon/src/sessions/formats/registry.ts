/**
 * The session file formats `session/import` reads, in detection order. A format is one module
 * (format.ts says what it supplies); adding one means adding it here and its name to
 * `IMPORT_FORMATS` in the protocol.
 */
import { IMPORT_FORMATS, type ImportFormat } from "@base-context/protocol";
import { AppError } from "../../errors.js";
import { claudeCodeFormat } from "./claude-code/format.js";
import { codexFormat } from "./codex/format.js";
import type { SessionFormat } from "./format.js";
import { piFormat } from "./pi/format.js";

/** pi first: it is the default, and its header line is the most specific test. */
export const SESSION_FORMATS: readonly SessionFormat[] = [piFormat, claudeCodeFormat, codexFormat];

/** The format named `name`; an AppError when this build has no parser for it. */
export function sessionFormat(name: ImportFormat): SessionFormat {
  const format = SESSION_FORMATS.find((candidate) => candidate.name === name);
  if (format === undefined) {
    throw new AppError("not_supported", `the import format "${name}" is not supported by this build (it reads ${readableFormats()})`);
  }
  return format;
}

/** The format whose test the first lines pass, or undefined when none does. */
export function detectFormat(firstLines: readonly string[]): SessionFormat | undefined {
  return SESSION_FORMATS.find((format) => format.detect(firstLines));
}

/** "pi-jsonl, claude-code-jsonl" (the formats this build reads). */
export function readableFormats(): string {
  return SESSION_FORMATS.map((format) => format.name).join(", ");
}

/** Every format the protocol names, for messages that list what a file could be. */
export function knownFormatNames(): readonly ImportFormat[] {
  return IMPORT_FORMATS;
}
