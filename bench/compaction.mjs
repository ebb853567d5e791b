// Compaction: `compaction/prepare` on sessions of 10k and 100k entries (its cost must follow the
// range being compacted, not the size of the session), and a whole `compaction/run` with the
// extractive summarizer on a ~200k-token range. Runs against the built daemon over stdio, plus
// the same preparation in-process (without the JSON-RPC payload): `pnpm build && node bench/compaction.mjs`.
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { coreModule, daemonMain, daemonModule } from "./lib/dist.mjs";
import { progress, report } from "./lib/report.mjs";
import { median, since } from "./lib/stats.mjs";

if (!existsSync(daemonMain)) {
  process.stdout.write(`the daemon is not built (${daemonMain} is missing): run \`pnpm build\`\n`);
  process.exit(1);
}

const { protocol: P, startDaemon, temporaryHome, waitForBackfill } = await import("./lib/daemon-process.mjs");
const { conversation, piEntryId, writePiSession } = await import("./lib/generated-session.mjs");
const { Daemon } = await daemonModule("daemon.js");
const { prepareCompaction } = await coreModule();

const BYTES_PER_ENTRY = 700;
/** Entries from the latest compaction's first kept entry to the leaf: ~350k tokens, more than any context window. */
const RECENT_RANGE = 2_000;
/** ~175 tokens per generated entry: this many entries make a ~200k-token range. */
const RANGE_200K_ENTRIES = 1_150;
const WARM_RUNS = 20;
const PREPARE_TARGET_MS = 20;

const chat = conversation(BYTES_PER_ENTRY);
const home = temporaryHome("compaction");
// The extractive summarizer whatever the environment holds: the bench is offline.
writeFileSync(join(home.path, "settings.json"), JSON.stringify({ summarizer: { provider: "extractive" } }));

let sessions = 0;

/** Imports a generated linear session of `entryCount` entries; optionally compacts all but the last `keep`. */
async function buildSession(daemon, entryCount, keep) {
  const file = join(home.path, `generated-${entryCount}.jsonl`);
  await writePiSession(file, entryCount, { bytesPerEntry: BYTES_PER_ENTRY, sessionId: `bench-compaction-${++sessions}` });
  const { session } = await daemon.request(P.SessionImport, { format: "pi-jsonl", path: file });
  rmSync(file);
  if (keep !== undefined) {
    // `keep` is a multiple of 4: the first kept entry is a user message, a valid cut point.
    const compaction = {
      type: "compaction",
      summary: "## Goal\nBenchmark compaction.\n",
      firstKeptEntryId: piEntryId(entryCount - keep),
      tokensBefore: null,
    };
    await daemon.request(P.EntryAppend, { sessionId: session.id, entry: compaction });
    // A compaction as the leaf has nothing to compact: one more turn after it.
    await daemon.request(P.EntryAppendMany, { sessionId: session.id, entries: chat.entryBodies(4, entryCount) });
  }
  return session.id;
}

async function timeWarm(run) {
  await run();
  const times = [];
  for (let i = 0; i < WARM_RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(since(started));
  }
  return times;
}

const daemon = await startDaemon(home.path);
try {
  progress("importing a 10k-entry session");
  const raw10k = await buildSession(daemon, 10_000);
  progress("importing a 10k-entry session, compacted but for the last 2,000 entries");
  const compacted10k = await buildSession(daemon, 10_000, RECENT_RANGE);
  progress("importing a 100k-entry session, compacted but for the last 2,000 entries");
  const compacted100k = await buildSession(daemon, 100_000, RECENT_RANGE);
  progress("importing a ~200k-token session");
  const range200k = await buildSession(daemon, RANGE_200K_ENTRIES);
  // Imports leave token counts to a background backfill: let it finish, so it does not share the
  // CPU with what is measured below.
  progress("waiting for the daemon to backfill the imported sessions' token counts");
  await waitForBackfill(home.path, 120_000);

  // The same database opened in-process, as a CLI command would: the preparation without the
  // JSON-RPC round trip and its payload (every message to summarize travels in the reply).
  const local = new Daemon({ env: { ...process.env, BASE_CONTEXT_HOME: home.path }, watchSettings: false });
  try {
    const cases = [
      { label: "10k session, compacted, 2k-entry range", sessionId: compacted10k, target: PREPARE_TARGET_MS },
      { label: "100k session, compacted, 2k-entry range", sessionId: compacted100k, target: PREPARE_TARGET_MS },
      { label: "10k session, never compacted (10k-entry range)", sessionId: raw10k },
    ];
    for (const { label, sessionId, target } of cases) {
      progress(`compaction/prepare: ${label}`);
      const prepared = await local.compaction.prepare(sessionId);
      const summarized = prepared.preparation?.messagesToSummarize.length ?? 0;
      const inProcess = await timeWarm(() => local.compaction.prepare(sessionId));
      report({
        name: `prepare in-process, ${label}, warm p50 of ${WARM_RUNS}`,
        value: median(inProcess),
        unit: "ms",
        digits: 2,
        ...(target !== undefined ? { target: { max: target } } : {}),
        note: `${summarized.toLocaleString("en-US")} messages to summarize`,
      });
      // Where the time goes: the pure preparation alone, on a path read once.
      const path = await local.sessions.getContextPath(sessionId);
      const settings = local.sessionSettings.forSession(sessionId).compaction;
      const coreOnly = await timeWarm(() => prepareCompaction(path.entries, settings));
      report({ name: `  of which prepareCompaction (core, path already read)`, value: median(coreOnly), unit: "ms", digits: 2 });
      const overStdio = await timeWarm(() => daemon.request(P.CompactionPrepare, { sessionId }));
      report({
        name: `compaction/prepare over stdio, ${label}, warm p50`,
        value: median(overStdio),
        unit: "ms",
        digits: 2,
        note: "includes the messages in the reply",
      });
    }
  } finally {
    await local.dispose();
  }

  progress("compaction/run with the extractive summarizer on a ~200k-token range");
  const { tokens } = await daemon.request(P.ContextBuild, { sessionId: range200k });
  const started = performance.now();
  const result = await daemon.request(P.CompactionRun, { sessionId: range200k });
  report({
    name: `compaction/run, extractive, ${Math.round(tokens / 1000)}k-token session (prepare + summarize + commit)`,
    value: since(started),
    unit: "ms",
    digits: 0,
    target: { max: 1_000 },
    note: `${result.status}, ${result.stats?.summarizedMessages ?? 0} messages summarized`,
  });
} finally {
  await daemon.stop();
  home.remove();
}
