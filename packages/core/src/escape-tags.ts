/**
 * Untrusted text (conversation content, model-written summaries) is placed between wrapper tags
 * such as `<conversation>…</conversation>`. A literal closing tag inside that text would end the
 * wrapper early and let the rest be read as instructions. We neutralise exactly those closing
 * tags by escaping their slash, JavaScript-style: `</conversation>` becomes `<\/conversation>`.
 * A model still reads the tag name, a human sees where it came from, and undoing it is a plain
 * `<\/` → `</` replacement for these names. Opening tags and other markup are left untouched.
 */

/** Tags the core wraps untrusted text in. */
export const WRAPPER_TAGS = ["conversation", "previous-summary", "summary"] as const;

// `<`, optional spaces, `/`, optional spaces, a wrapper name, optional spaces, `>`; any case.
const CLOSING_WRAPPER_TAG = new RegExp(`<(\\s*)/(\\s*(?:${WRAPPER_TAGS.join("|")})\\s*>)`, "gi");

export function escapeWrapperClosingTags(text: string): string {
  return text.replace(CLOSING_WRAPPER_TAG, "<$1\\/$2");
}
