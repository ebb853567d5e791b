/**
 * The largest summary the daemon stores (`limits.maxSummaryBytes`). A summary is handed back to
 * the next compaction as its previous summary and goes into every context built after it: one
 * that grew without bound (a model that never stopped, a plugin's runaway result) would grow
 * every later step with it. Summaries the daemon writes itself are cut to the limit; a plugin's
 * over-size summary is rejected instead (a failure of that plugin, see docs/plugins.md).
 */

/** UTF-8 length of `text`, without encoding it. */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The limit a cut names when no other is given. */
export const MAX_SUMMARY_BYTES = "limits.maxSummaryBytes";

/**
 * The note that ends a summary cut at the limit, naming it: `limits.maxSummaryBytes`, or the
 * summary budget of the model's window (docs/compaction-rungs.md#settings-that-fit-the-window).
 */
export function summaryCutNote(maxBytes: number, limitName = MAX_SUMMARY_BYTES): string {
  return `\n\n[summary cut at ${maxBytes} bytes: ${limitName}]`;
}

/**
 * `summary` when it fits in `maxBytes` (UTF-8), else its longest prefix that fits together with
 * a note saying it was cut. Never splits a character. `limitBytes` is the limit the note names,
 * when the text is cut shorter than the limit to leave room for what follows it (repair lines);
 * `limitName` the setting or budget it comes from.
 */
export function capSummary(summary: string, maxBytes: number, limitBytes = maxBytes, limitName = MAX_SUMMARY_BYTES): string {
  // Fast path: no UTF-16 unit takes more than 3 UTF-8 bytes.
  if (summary.length * 3 <= maxBytes || utf8ByteLength(summary) <= maxBytes) return summary;
  const note = summaryCutNote(limitBytes, limitName);
  const budget = Math.max(0, maxBytes - utf8ByteLength(note));
  let bytes = 0;
  let end = 0;
  while (end < summary.length) {
    const code = summary.charCodeAt(end);
    const pair = code >= 0xd800 && code <= 0xdbff && end + 1 < summary.length && (summary.charCodeAt(end + 1) & 0xfc00) === 0xdc00;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > budget) break;
    bytes += size;
    end += pair ? 2 : 1;
  }
  return summary.slice(0, end) + note;
}
