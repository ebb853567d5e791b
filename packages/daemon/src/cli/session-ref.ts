/**
 * A session or an entry named on the command line: its full id, or (like git) a unique prefix of
 * it, so `base-context show 5b0c` works when only one session id starts with "5b0c".
 */
import { sessionNotFound } from "../errors.js";
import type { Daemon } from "../daemon.js";
import type { FlatNode } from "../tree/view/index.js";
import { CliError } from "./cli-error.js";
import { idTooShort, MIN_ID_PREFIX } from "./messages.js";
const PAGE_SIZE = 1000;

export async function resolveSessionId(daemon: Daemon, given: string): Promise<string> {
  if (daemon.sessions.records.getSession(given)) return given;
  if (given.length < MIN_ID_PREFIX) throw idTooShort(given);
  const matches: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await daemon.sessions.list({ limit: PAGE_SIZE, cursor });
    for (const session of page.sessions) if (session.id.startsWith(given)) matches.push(session.id);
    cursor = page.nextCursor;
  } while (cursor !== undefined && matches.length < 2);
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new CliError(`"${given}" is the start of more than one session id: ${matches.join(", ")}`, ["Give more of the id."]);
  }
  throw sessionNotFound(given);
}

/** An entry id, or a unique start of one, among the session's entries. */
export function resolveEntryId(nodes: readonly FlatNode[], given: string, sessionId: string): string {
  if (nodes.some((node) => node.entry.id === given)) return given;
  const matches = given.length === 0 ? [] : nodes.filter((node) => node.entry.id.startsWith(given)).map((node) => node.entry.id);
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1)
    throw new CliError(
      `"${given}" is the start of more than one entry id: ${matches.slice(0, 5).join(", ")}${matches.length > 5 ? ", …" : ""}`,
      ["Give more of the id."],
    );
  throw new CliError(`session ${sessionId} has no entry "${given}"`, [`See its entries with: base-context tree ${sessionId}`]);
}
