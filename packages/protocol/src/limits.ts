/**
 * How long the strings a client sends may be. Every request's params are bounded by the message
 * size (`limits.maxMessageBytes`), but a path, an id or a name is quoted back in errors, stored in
 * headers and sent with every session summary: one of megabytes would be carried everywhere. So
 * each kind has its own bound, checked by the schemas (-32602 naming the field and the bound).
 */
import { z } from "zod";

/** A path (cwd, an import or export file, a project folder): PATH_MAX on Linux. */
export const MAX_PATH_BYTES = 4096;
/** A session, entry, job or plugin id, a progress token. Real ids are UUIDs or a few hex characters. */
export const MAX_ID_CHARS = 256;
/** A session's name (session/create, session/rename). */
export const MAX_NAME_CHARS = 500;
/** A label on an entry (label/set, tree/navigate). */
export const MAX_LABEL_CHARS = 500;

/** UTF-8 bytes of `text`, counted without encoding it. */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      bytes += 4; // a surrogate pair: one 4-byte character
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** A path field: at most MAX_PATH_BYTES of UTF-8 (the characters' bound is checked first, so a huge value costs nothing). */
export const PathString = (): z.ZodString =>
  z
    .string()
    .max(MAX_PATH_BYTES, `a path is at most ${MAX_PATH_BYTES} bytes`)
    .refine((path) => path.length > MAX_PATH_BYTES || utf8Bytes(path) <= MAX_PATH_BYTES, {
      message: `a path is at most ${MAX_PATH_BYTES} bytes (UTF-8)`,
    })
    // Read by the protocol reference's generator: the bound is in bytes.
    .meta({ maxUtf8Bytes: MAX_PATH_BYTES });

/** A non-empty id. */
export const IdString = (): z.ZodString => z.string().min(1).max(MAX_ID_CHARS, `an id is at most ${MAX_ID_CHARS} characters`);

/** A model's context window in tokens, as requests give it. */
export const ContextWindow = (): z.ZodNumber => z.number().int().positive();

/** A progress token (`workDoneToken`). */
export const ProgressToken = () => z.union([z.string().max(MAX_ID_CHARS, `a token is at most ${MAX_ID_CHARS} characters`), z.number()]);

/** Characters of a client's string quoted back in an error message (the rest is only counted). */
export const QUOTED_PREFIX_CHARS = 80;

/**
 * A string the client sent, as an error message may quote it: JSON-quoted whole when short, else
 * its first QUOTED_PREFIX_CHARS characters and its length. An error never echoes megabytes back.
 */
export function quoteInput(text: string, max = QUOTED_PREFIX_CHARS): string {
  if (text.length <= max) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, max))}… (${text.length} characters)`;
}
