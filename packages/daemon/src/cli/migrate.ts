/**
 * `base-context migrate --to <url>` / `--from <url>`: every session of the SQLite file copied
 * into PostgreSQL, or back (sessions/migrate.ts does the copying; docs/storage.md#migrating).
 * Each session's outcome is a line on stderr as it happens; the summary goes to stdout.
 */
import { flag, JSON_OPTION, stringOption, UsageError, type CommandSpec } from "./args.js";
import { checkEndpoints, openEndpoint, parseEndpointUrl, sqliteEndpoint, type Endpoint } from "./migrate-endpoints.js";
import { formatCount, plural, processIo, startProgress, styleFor, table, writeJson, type CliIo, type Style } from "./output.js";
import { EXIT, runCommand } from "./run.js";
import { defaultDatabasePath } from "../paths.js";
import type { CopyStore, MigrateReport, SessionOutcome } from "../sessions/migrate.js";

export const MIGRATE_SPEC: CommandSpec = {
  name: "migrate",
  summary: "copy every session from the SQLite file into PostgreSQL (--to), or back (--from)",
  description:
    "Each session is copied exactly (its entries' stored JSON in order, labels, token counts, name,\n" +
    "position) and verified: entry counts and a SHA-256 checksum are compared on both sides. A session\n" +
    "already on the target identically is skipped, so after an interruption the same command copies\n" +
    "only what is missing. One that differs on the target is a conflict and left alone (--overwrite\n" +
    "replaces it). The source's sessions are only read.",
  options: [
    { name: "to", value: "url", description: "copy the SQLite file's sessions into this database (postgres://…)" },
    { name: "from", value: "url", description: "copy this database's sessions into the SQLite file" },
    { name: "db", value: "path", description: "the SQLite file (default: the daemon's, BASE_CONTEXT_DB or ~/.base-context/sessions.db)" },
    { name: "overwrite", description: "replace sessions that differ on the target with the source's (the target's version is deleted)" },
    JSON_OPTION,
  ],
  examples: [
    "base-context migrate --to postgres://me@127.0.0.1:5432/base_context",
    "base-context migrate --from postgres://me@127.0.0.1:5432/base_context --db ~/sessions-copy.db",
  ],
  exitStatus:
    "Exit status: 0 every session is on the target (copied or already there), 1 a conflict, a failure\n" +
    "or an interruption (run again to continue), 2 usage error.",
};

export function migrateCommand(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runCommand(MIGRATE_SPEC, argv, io, async (args) => {
    const to = stringOption(args, "to");
    const from = stringOption(args, "from");
    if ((to === undefined) === (from === undefined)) throw new UsageError("give either --to <url> or --from <url>");
    const db = stringOption(args, "db");
    const file = sqliteEndpoint(db ?? defaultDatabasePath(io.env));
    const other = parseEndpointUrl(to !== undefined ? "to" : "from", (to ?? from)!);
    const [source, target] = to !== undefined ? [file, other] : [other, file];
    checkEndpoints(source, target);

    // The server first: an unreachable one fails before the SQLite file is opened (or created).
    const opened: { close(): Promise<void> }[] = [];
    const open = async (endpoint: Endpoint) => {
      const store = await openEndpoint(endpoint);
      opened.push(store);
      return store;
    };
    const interrupt = new AbortController();
    const onSignal = () => interrupt.abort();
    try {
      let sourceStore: CopyStore;
      let targetStore: CopyStore;
      if (source.kind === "sqlite" && target.kind !== "sqlite") {
        targetStore = await open(target);
        sourceStore = await open(source);
      } else {
        sourceStore = await open(source);
        targetStore = await open(target);
      }
      // The first Ctrl-C stops after removing the half-copied session; a second one ends the process at once.
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      const { migrateSessions } = await import("../sessions/migrate.js");
      const lines = sessionLines(io);
      const report = await migrateSessions(sourceStore, targetStore, {
        overwrite: flag(args, "overwrite"),
        signal: interrupt.signal,
        onStart: lines.start,
        onEntries: lines.entries,
        onSession: lines.done,
      });
      lines.close();
      if (flag(args, "json")) writeJson(io, { from: source.shown, to: target.shown, ...counts(report), sessions: report.sessions });
      else printSummary(io, source, target, report, flag(args, "overwrite"));
      return report.failed > 0 || report.conflicts > 0 || report.stopped ? EXIT.failure : EXIT.ok;
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      for (const store of opened.reverse()) await store.close().catch(() => undefined);
    }
  });
}

function counts(report: MigrateReport) {
  const { copied, skipped, conflicts, failed, notAttempted } = report;
  const ok = failed === 0 && conflicts === 0 && !report.stopped;
  return { ok, copied, skipped, conflicts, failed, notAttempted, stopped: report.stopped };
}

/** One line per session on stderr, and on a terminal a live count of the entries of a long one. */
function sessionLines(io: CliIo) {
  const style = styleFor(io.stderr, io.env);
  let progress: ReturnType<typeof startProgress> | undefined;
  let width = 1;
  return {
    start(sessionId: string, index: number, total: number) {
      width = String(total).length;
      progress = startProgress(io, `[${String(index).padStart(width)}/${total}] copying ${sessionId}`);
    },
    entries(sessionId: string, copied: number, total: number) {
      progress?.update(`copying ${sessionId}: ${formatCount(copied)} of ${plural(total, "entry", "entries")}`);
    },
    done(outcome: SessionOutcome, index: number, total: number) {
      progress?.done();
      io.stderr.write(`[${String(index).padStart(width)}/${total}] ${outcomeLine(outcome, style)}\n`);
    },
    close() {
      progress?.done();
    },
  };
}

function outcomeLine(outcome: SessionOutcome, style: Style): string {
  const name = outcome.name !== undefined ? ` "${outcome.name}"` : "";
  const who = `${outcome.sessionId}${name}`;
  switch (outcome.status) {
    case "copied":
      return `${style.green("copied")}    ${who}: ${plural(outcome.entryCount, "entry", "entries")}, verified (sha256 ${outcome.checksum.slice(0, 12)})${outcome.replaced ? ", replacing the target's" : ""}`;
    case "skipped": {
      const what = outcome.checksum ? ` (${plural(outcome.entryCount, "entry", "entries")}, sha256 ${outcome.checksum.slice(0, 12)})` : "";
      return `${style.dim("skipped")}   ${who}: ${outcome.reason}${what}`;
    }
    case "conflict":
      return `${style.yellow("conflict")}  ${who}: differs on the target, left alone: ${outcome.difference}`;
    case "failed":
      return `${style.red("failed")}    ${who}: ${outcome.reason}`;
  }
}

function printSummary(io: CliIo, source: Endpoint, target: Endpoint, report: MigrateReport, overwrite: boolean): void {
  const style = styleFor(io.stdout, io.env);
  const entries = report.sessions.reduce((sum, outcome) => sum + (outcome.status === "copied" ? outcome.entryCount : 0), 0);
  const rows = [
    ["copied", formatCount(report.copied), `(${plural(entries, "entry", "entries")})`],
    ["skipped", formatCount(report.skipped), "(already on the target, identical)"],
    ["conflicts", formatCount(report.conflicts), report.conflicts > 0 ? "(differ on the target, left alone)" : ""],
    ["failed", formatCount(report.failed), ""],
  ];
  if (report.notAttempted > 0) rows.push(["not tried", formatCount(report.notAttempted), ""]);
  io.stdout.write(`${style.bold("Sessions")} from ${source.shown} to ${target.shown}\n`);
  const lines = table(rows.map((row) => row.map((cell, i) => (i === 0 ? `  ${cell}` : cell))), ["left", "right"]);
  io.stdout.write(`${lines.replace(/ +$/gm, "")}\n`);
  if (report.stopped) {
    io.stdout.write(`${style.red(report.stopped.interrupted ? "Interrupted." : `Stopped: ${report.stopped.reason.replace(/\.?$/, ".")}`)} Run the same command again to copy the rest.\n`);
  }
  if (report.conflicts > 0 && !overwrite) {
    io.stdout.write(`${style.dim("To replace the target's versions with the source's, run the same command with --overwrite.")}\n`);
  }
}
