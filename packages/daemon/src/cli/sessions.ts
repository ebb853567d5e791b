/** `base-context sessions [query] [--cwd dir] [--limit n] [--json]`: list and search sessions. */
import { resolve } from "node:path";
import type { ResultOf, SessionSearch, SessionSummary } from "@base-context/protocol";
import type { z } from "zod";
import { integerOption, JSON_OPTION, stringOption, flag, type CommandSpec } from "./args.js";
import { withDaemon } from "./open-daemon.js";
import {
  displayPath,
  displayTime,
  fitWidth,
  formatCount,
  lineWidth,
  oneLine,
  plural,
  processIo,
  styleFor,
  table,
  writeJson,
  type CliIo,
} from "./output.js";
import { runCommand } from "./run.js";

type Summary = z.infer<typeof SessionSummary>;

export const SESSIONS_SPEC: CommandSpec = {
  name: "sessions",
  summary: "list sessions, newest first; search everything they say",
  description:
    "Without a query: the sessions, newest first. With one: a full-text search of what the\n" +
    "sessions say (user and assistant messages, shell commands, summaries, names), best match\n" +
    "first, with the matching entries under each session. Every word must appear; \"theme\"\n" +
    "also finds \"themes\". Tool results are not searched.\n" +
    "The ids shown are what show, export, tree and the protocol take.",
  arguments: [{ name: "query", description: "words to search for", optional: true }],
  options: [
    { name: "cwd", value: "dir", description: "only sessions started in this folder (relative paths are resolved)" },
    { name: "limit", value: "n", description: "show at most n sessions (default 20, at most 10000)" },
    JSON_OPTION,
  ],
  examples: ["base-context sessions", 'base-context sessions "refresh token" --limit 5', "base-context sessions --cwd . --json"],
};

const DEFAULT_LIMIT = 20;
/** The protocol's page size limit; longer lists are read page by page. */
const PAGE_SIZE = 1000;
const TITLE_CHARS = 72;

export function sessionsCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(SESSIONS_SPEC, argv, io, async (args) => {
    const limit = integerOption(args, "limit", { min: 1, max: 10_000 }) ?? DEFAULT_LIMIT;
    const cwdOption = stringOption(args, "cwd");
    const cwd = cwdOption !== undefined ? resolve(cwdOption) : undefined;
    const query = args.arguments[0];
    if (query !== undefined && query.trim().length > 0) {
      const { results } = await withDaemon(io, (daemon) =>
        daemon.sessions.search({ query, ...(cwd !== undefined ? { cwd } : {}), limit: Math.min(limit, PAGE_SIZE) }),
      );
      // `sessions` as without a query (the same shape for scripts), with the hits in `results`.
      if (flag(args, "json")) writeJson(io, { sessions: results.map((result) => result.session), more: false, results });
      else printSearchResults(io, results);
      return;
    }

    const { sessions, more } = await withDaemon(io, async (daemon) => {
      const found: Summary[] = [];
      let cursor: string | undefined;
      do {
        const page = await daemon.sessions.list({ cwd, query, limit: Math.min(PAGE_SIZE, limit - found.length), cursor });
        found.push(...page.sessions);
        cursor = page.nextCursor;
      } while (cursor !== undefined && found.length < limit);
      return { sessions: found, more: cursor !== undefined };
    });

    if (flag(args, "json")) {
      writeJson(io, { sessions, more });
      return;
    }
    printSessions(io, sessions, { more, limit, filtered: query !== undefined || cwd !== undefined });
  });
}

type SearchResult = ResultOf<typeof SessionSearch>["results"][number];

function printSearchResults(io: CliIo, results: readonly SearchResult[]): void {
  const style = styleFor(io.stdout, io.env);
  if (results.length === 0) {
    io.stdout.write("No sessions match.\n");
    return;
  }
  const width = lineWidth(io);
  const rows = results.map(({ session }) => [
    session.id,
    displayTime(session.modifiedAt),
    formatCount(session.entryCount),
    displayPath(session.cwd),
    oneLine(session.name ?? session.firstMessage ?? "(no messages)", TITLE_CHARS),
  ]);
  const header = ["ID", "UPDATED", "ENTRIES", "CWD", "TITLE"].map((title) => style.bold(title));
  const [head, ...lines] = table([header, ...rows], ["left", "left", "right", "left", "left"]).split("\n");
  const out = [fitWidth(head!, width)];
  results.forEach((result, index) => {
    out.push(fitWidth(lines[index]!, width));
    if (result.nameMatches) out.push(fitWidth(style.dim("    the name matches"), width));
    for (const hit of result.hits) out.push(fitWidth(`    ${style.dim(hit.entryId)} ${hit.role ?? hit.type}: ${hit.snippet}`, width));
    const more = result.hitCount - result.hits.length;
    if (more > 0) out.push(style.dim(`    … ${plural(more, "more matching entry", "more matching entries")}`));
  });
  io.stdout.write(`${out.join("\n")}\n${style.dim(`${plural(results.length, "session")} found, best match first`)}\n`);
}

function printSessions(io: CliIo, sessions: readonly Summary[], options: { more: boolean; limit: number; filtered: boolean }): void {
  const style = styleFor(io.stdout, io.env);
  if (sessions.length === 0) {
    io.stdout.write(options.filtered ? "No sessions match.\n" : "No sessions yet. Import one with: base-context import <file.jsonl>\n");
    return;
  }
  const width = lineWidth(io);
  const rows = sessions.map((session) => [
    session.id,
    displayTime(session.modifiedAt),
    formatCount(session.entryCount),
    displayPath(session.cwd),
    oneLine(session.name ?? session.firstMessage ?? "(no messages)", TITLE_CHARS),
  ]);
  const header = ["ID", "UPDATED", "ENTRIES", "CWD", "TITLE"].map((title) => style.bold(title));
  const lines = table([header, ...rows], ["left", "left", "right", "left", "left"]).split("\n");
  io.stdout.write(`${lines.map((line) => fitWidth(line, width)).join("\n")}\n`);
  const footer = options.more
    ? `${plural(sessions.length, "session")} shown; more match (use --limit to see more)`
    : plural(sessions.length, "session");
  io.stdout.write(`${style.dim(footer)}\n`);
}
